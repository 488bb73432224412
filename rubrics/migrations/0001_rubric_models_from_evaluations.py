"""The rubric models move from evaluations to this app without touching the database.

State only: the tables keep their names (`Meta.db_table`), with their rows, constraints and
indexes. Applied before evaluations forgets the models (its 0011), so the review app's link to
RubricCriterion can be re-pointed in between and the state never holds a dangling reference.
"""

import django.core.validators
import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("evaluations", "0010_conversation_run_judged_index"),
        ("llm", "0006_prompt_text_stored_once"),
        ("metrics_registry", "0007_synthetic_flag"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="RubricCriterion",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        ("position", models.PositiveSmallIntegerField(default=0)),
                        ("text", models.TextField()),
                        (
                            "points",
                            models.SmallIntegerField(
                                help_text="−10..+10, not 0: positive rewards, negative penalises.",
                                validators=[
                                    django.core.validators.MinValueValidator(-10),
                                    django.core.validators.MaxValueValidator(10),
                                ],
                            ),
                        ),
                        (
                            "dimension",
                            models.CharField(
                                help_text="A RubricDimension slug (checked on import and in forms).",
                                max_length=40,
                            ),
                        ),
                        (
                            "tags",
                            models.JSONField(
                                blank=True,
                                default=list,
                                help_text='As in the source, e.g. ["level:example", "axis:..."].',
                            ),
                        ),
                        (
                            "origin",
                            models.CharField(
                                choices=[
                                    (
                                        "platform",
                                        "Written on the platform (counts after expert consensus)",
                                    ),
                                    (
                                        "published",
                                        "Imported from a published benchmark (validated by its source)",
                                    ),
                                ],
                                default="platform",
                                max_length=10,
                            ),
                        ),
                        (
                            "consensus_state",
                            models.CharField(
                                choices=[
                                    ("unreviewed", "Awaiting consensus"),
                                    ("survived", "Survived consensus"),
                                    ("dropped", "Dropped by consensus"),
                                ],
                                default="unreviewed",
                                help_text="Expert consensus on a criterion written on the platform.",
                                max_length=10,
                            ),
                        ),
                    ],
                    options={
                        "verbose_name_plural": "rubric criteria",
                        "db_table": "evaluations_rubriccriterion",
                        "ordering": ["item", "position"],
                    },
                ),
                migrations.CreateModel(
                    name="RubricDimension",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        ("slug", models.SlugField(max_length=40, unique=True)),
                        ("name", models.CharField(max_length=120)),
                        ("description", models.TextField(blank=True)),
                        (
                            "frameworks",
                            models.JSONField(
                                blank=True,
                                default=list,
                                help_text='Benchmarks using it, e.g. ["HealthBench"].',
                            ),
                        ),
                        ("position", models.PositiveSmallIntegerField(default=0)),
                    ],
                    options={
                        "db_table": "evaluations_rubricdimension",
                        "ordering": ["position", "slug"],
                    },
                ),
                migrations.CreateModel(
                    name="ReleaseRubricFreeze",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        ("frozen_at", models.DateTimeField(auto_now_add=True)),
                        (
                            "release",
                            models.OneToOneField(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="rubric_freeze",
                                to="metrics_registry.release",
                            ),
                        ),
                        (
                            "criteria",
                            models.ManyToManyField(
                                blank=True,
                                db_table="evaluations_releaserubricfreeze_criteria",
                                related_name="+",
                                to="rubrics.rubriccriterion",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "evaluations_releaserubricfreeze",
                    },
                ),
                migrations.CreateModel(
                    name="RubricItem",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        ("created_at", models.DateTimeField(auto_now_add=True, db_index=True)),
                        ("updated_at", models.DateTimeField(auto_now=True)),
                        (
                            "key",
                            models.SlugField(
                                help_text="Stable identifier from the file.",
                                max_length=100,
                                unique=True,
                            ),
                        ),
                        ("title", models.CharField(blank=True, max_length=200)),
                        (
                            "messages",
                            models.JSONField(
                                help_text='[{"role": "user"|"assistant", "content": "..."}], ending with a user message.'
                            ),
                        ),
                        (
                            "acuity",
                            models.CharField(
                                blank=True,
                                choices=[
                                    ("non_acute", "Non-acute"),
                                    ("high_acuity", "High acuity"),
                                    ("emergency", "Emergency"),
                                ],
                                db_index=True,
                                help_text="Optional.",
                                max_length=12,
                            ),
                        ),
                        (
                            "population",
                            models.CharField(
                                blank=True,
                                choices=[
                                    ("adult", "Adult"),
                                    ("teen", "Teen"),
                                    ("caregiver", "Caregiver"),
                                    ("clinician", "Clinician"),
                                ],
                                db_index=True,
                                help_text="Optional.",
                                max_length=10,
                            ),
                        ),
                        (
                            "language",
                            models.CharField(
                                default="en", help_text="BCP 47 tag, e.g. en, pt-BR.", max_length=16
                            ),
                        ),
                        ("source", models.CharField(blank=True, max_length=200)),
                        (
                            "source_format",
                            models.CharField(
                                default="impactbench",
                                help_text='"impactbench" or "healthbench".',
                                max_length=20,
                            ),
                        ),
                        (
                            "external_id",
                            models.CharField(
                                blank=True,
                                help_text="The identifier in the source file (prompt_id).",
                                max_length=200,
                            ),
                        ),
                        (
                            "metadata",
                            models.JSONField(
                                blank=True,
                                default=dict,
                                help_text="Kept from the source row: HealthBench's example_tags (themes, physician categories) and ideal_completions_data, and any other field it carried.",
                            ),
                        ),
                        (
                            "runs",
                            models.ManyToManyField(
                                blank=True,
                                db_table="evaluations_evaluationrun_rubric_items",
                                related_name="rubric_items",
                                to="evaluations.evaluationrun",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "evaluations_rubricitem",
                        "ordering": ["key"],
                    },
                ),
                migrations.AddField(
                    model_name="rubriccriterion",
                    name="item",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="criteria",
                        to="rubrics.rubricitem",
                    ),
                ),
                migrations.CreateModel(
                    name="RubricResponse",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        ("created_at", models.DateTimeField(auto_now_add=True, db_index=True)),
                        ("updated_at", models.DateTimeField(auto_now=True)),
                        ("reply", models.TextField(blank=True)),
                        (
                            "status",
                            models.CharField(
                                choices=[
                                    ("pending", "Pending"),
                                    ("running", "Running"),
                                    ("completed", "Completed"),
                                    ("failed", "Failed"),
                                ],
                                default="pending",
                                max_length=10,
                            ),
                        ),
                        ("error", models.TextField(blank=True)),
                        (
                            "score",
                            models.FloatField(
                                blank=True,
                                help_text="HealthBench item score; not clipped, can be negative.",
                                null=True,
                            ),
                        ),
                        (
                            "counted_criteria",
                            models.JSONField(
                                blank=True,
                                help_text="Ids of the criteria that counted, frozen when grading began, so later reviews never change this score.",
                                null=True,
                            ),
                        ),
                        ("attempts", models.PositiveIntegerField(default=0)),
                        ("call_ids", models.JSONField(blank=True, default=list)),
                        ("is_offline", models.BooleanField(default=False)),
                        ("claimed_by", models.CharField(blank=True, max_length=200)),
                        ("lease_expires_at", models.DateTimeField(blank=True, null=True)),
                        ("dispatched_at", models.DateTimeField(blank=True, null=True)),
                        (
                            "item",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="responses",
                                to="rubrics.rubricitem",
                            ),
                        ),
                        (
                            "run",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="rubric_responses",
                                to="evaluations.evaluationrun",
                            ),
                        ),
                        (
                            "target",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="+",
                                to="llm.modelconfiguration",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "evaluations_rubricresponse",
                        "ordering": ["run", "item", "target"],
                    },
                ),
                migrations.CreateModel(
                    name="RubricGrade",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        ("met", models.BooleanField()),
                        ("justification", models.TextField(blank=True)),
                        ("call_ids", models.JSONField(blank=True, default=list)),
                        (
                            "criterion",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="grades",
                                to="rubrics.rubriccriterion",
                            ),
                        ),
                        (
                            "response",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="grades",
                                to="rubrics.rubricresponse",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "evaluations_rubricgrade",
                        "ordering": ["response", "criterion__position"],
                    },
                ),
                migrations.AddConstraint(
                    model_name="rubriccriterion",
                    constraint=models.CheckConstraint(
                        condition=models.Q(
                            ("points__gte", -10),
                            ("points__lte", 10),
                            models.Q(("points", 0), _negated=True),
                        ),
                        name="rubric_criterion_points_range_nonzero",
                    ),
                ),
                migrations.AddConstraint(
                    model_name="rubriccriterion",
                    constraint=models.UniqueConstraint(
                        fields=("item", "position"), name="rubric_criterion_unique_position"
                    ),
                ),
                migrations.AddConstraint(
                    model_name="rubricresponse",
                    constraint=models.UniqueConstraint(
                        fields=("run", "item", "target"),
                        name="rubric_response_unique_per_run_item_target",
                    ),
                ),
                migrations.AddConstraint(
                    model_name="rubricgrade",
                    constraint=models.UniqueConstraint(
                        fields=("response", "criterion"), name="rubric_grade_unique_per_criterion"
                    ),
                ),
            ],
            database_operations=[],
        ),
    ]
