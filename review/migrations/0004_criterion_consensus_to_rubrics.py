"""CriterionConsensus points at RubricCriterion in the rubrics app: same table, state only."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("review", "0003_user_priorities_kind"),
        ("rubrics", "0001_rubric_models_from_evaluations"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="criterionconsensus",
                    name="criterion",
                    field=models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="consensus",
                        to="rubrics.rubriccriterion",
                    ),
                ),
            ],
            database_operations=[],
        ),
    ]
