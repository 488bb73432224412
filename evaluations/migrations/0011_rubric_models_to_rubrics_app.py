"""The rubric models now belong to the rubrics app (its 0001): evaluations forgets them.

State only: the tables, their rows, constraints and indexes stay as they are, now described by
the rubrics app's models (which keep these table names). The run ↔ rubric item table is
declared there too, as `RubricItem.runs`.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("evaluations", "0010_conversation_run_judged_index"),
        ("rubrics", "0001_rubric_models_from_evaluations"),
        ("review", "0004_criterion_consensus_to_rubrics"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveField(model_name="evaluationrun", name="rubric_items"),
                # Referring models before the models they refer to.
                migrations.DeleteModel(name="ReleaseRubricFreeze"),
                migrations.DeleteModel(name="RubricGrade"),
                migrations.DeleteModel(name="RubricResponse"),
                migrations.DeleteModel(name="RubricCriterion"),
                migrations.DeleteModel(name="RubricItem"),
                migrations.DeleteModel(name="RubricDimension"),
            ],
            database_operations=[],
        ),
    ]
