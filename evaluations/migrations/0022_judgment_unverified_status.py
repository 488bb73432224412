from django.db import migrations


def unverified_forward(apps, schema_editor):
    # Readings already flagged by the transcript check keep that finding as their status; the
    # others stay "unchecked": what their quotes showed was never asked.
    Judgment = apps.get_model("evaluations", "Judgment")
    Judgment.objects.filter(has_unverified_quotes=True).update(evidence_status="unverified")


def unverified_backward(apps, schema_editor):
    Judgment = apps.get_model("evaluations", "Judgment")
    Judgment.objects.update(evidence_status="unchecked")


class Migration(migrations.Migration):
    dependencies = [("evaluations", "0021_evidence_support_status")]

    operations = [migrations.RunPython(unverified_forward, unverified_backward)]
