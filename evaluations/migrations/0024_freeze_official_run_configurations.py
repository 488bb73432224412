"""Freeze the published names of every configuration that runs already official used, as
`run_set_official` does from now on (earliest run first, so each keeps its first run)."""

from django.db import migrations


def freeze(apps, schema_editor):
    run_model = apps.get_model("evaluations", "EvaluationRun")
    configuration_model = apps.get_model("llm", "ModelConfiguration")
    conversation_model = apps.get_model("evaluations", "Conversation")
    judgment_model = apps.get_model("evaluations", "Judgment")
    reading_model = apps.get_model("evaluations", "FidelityReading")
    panel_model = apps.get_model("evaluations", "RunJudge")
    rubric_model = apps.get_model("evaluations", "RubricResponse")
    for run in run_model.objects.filter(is_official=True).order_by("pk"):
        ids = {run.simulator_id, run.judge_id, run.fidelity_checker_id}
        ids.update(run.targets.values_list("pk", flat=True))
        ids.update(panel_model.objects.filter(run=run).values_list("judge_id", flat=True))
        for model, field, path in (
            (conversation_model, "target_id", "run"),
            (judgment_model, "judge_id", "conversation__run"),
            (reading_model, "checker_id", "conversation__run"),
            (rubric_model, "target_id", "run"),
        ):
            ids.update(model.objects.filter(**{path: run}).values_list(field, flat=True).distinct())
        configuration_model.objects.filter(
            pk__in=[pk for pk in ids if pk is not None], published_in_run__isnull=True
        ).update(published_in_run=run.pk)


class Migration(migrations.Migration):
    dependencies = [
        ("evaluations", "0023_fidelity"),
        ("llm", "0014_modelconfiguration_published_in_run"),
    ]

    operations = [migrations.RunPython(freeze, migrations.RunPython.noop)]
