from collections.abc import Iterable

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from ..models import (
    Benchmark,
    LabelCategory,
    Metric,
    MetricVersion,
    MetricVersionText,
    Release,
    Subarea,
)


class SubareaOutput(serializers.ModelSerializer):
    area = serializers.SlugRelatedField(slug_field="slug", read_only=True)

    class Meta:
        model = Subarea
        fields = ["slug", "name", "area"]


class LabelCategoryOutput(serializers.ModelSerializer):
    class Meta:
        model = LabelCategory
        fields = ["slug", "name", "polarity"]


class BenchmarkOutput(serializers.ModelSerializer):
    class Meta:
        model = Benchmark
        fields = ["slug", "name", "citation", "url", "license"]


class MetricVersionOutput(serializers.ModelSerializer):
    subareas = SubareaOutput(many=True, read_only=True)
    label_category = LabelCategoryOutput(read_only=True)

    class Meta:
        model = MetricVersion
        fields = [
            "number",
            "name",
            "criterion",
            "polarity",
            "subareas",
            "label_category",
            "rubric_notes",
            "failure_condition",
            "age_contexts",
            "language",
            "change_note",
            "created_at",
        ]


class MetricOutput(serializers.ModelSerializer):
    # Expert submissions have no benchmark; a metric being created has no version yet.
    benchmark = BenchmarkOutput(read_only=True, allow_null=True)
    current_version = MetricVersionOutput(read_only=True, allow_null=True)

    class Meta:
        model = Metric
        fields = [
            "key",
            "validation_status",
            "source_kind",
            "credit_name",
            "benchmark",
            "source_reference",
            "current_version",
        ]


class MetricVersionSummaryOutput(serializers.ModelSerializer):
    class Meta:
        model = MetricVersion
        fields = ["number", "name", "change_note", "created_at"]


class MetricTextOutput(serializers.ModelSerializer):
    """The current version's content in one other language, as shown on the public pages."""

    class Meta:
        model = MetricVersionText
        fields = ["language", "name", "criterion", "failure_condition", "provenance"]


class MetricDetailOutput(MetricOutput):
    versions = MetricVersionSummaryOutput(many=True, read_only=True)
    # Not switched by Accept-Language: every shown text is listed and the caller picks.
    texts = serializers.SerializerMethodField(
        help_text="The current version's name, criterion and failure condition in other "
        "languages: texts written natively or machine-translated and reviewed by a reader of "
        "the language (unreviewed machine translations are left out). The version's own "
        "language is current_version.language."
    )

    class Meta(MetricOutput.Meta):
        fields = [*MetricOutput.Meta.fields, "versions", "texts"]

    @extend_schema_field(MetricTextOutput(many=True))
    def get_texts(self, metric) -> list[dict]:
        version = metric.current_version
        if version is None:
            return []
        texts = getattr(version, "public_texts", None)
        if texts is None:
            texts = version.texts.shown_publicly().order_by("language")
        return MetricTextOutput(texts, many=True).data


class ReleaseOutput(serializers.ModelSerializer):
    metric_count = serializers.IntegerField(read_only=True)

    class Meta:
        model = Release
        fields = ["version", "title", "status", "published_at", "metric_count"]


class ReleaseItemOutput(serializers.Serializer):
    key = serializers.CharField(source="metric.key")
    validation_status = serializers.CharField(source="metric.validation_status")
    version = MetricVersionOutput(source="metric_version")


class ReleaseDetailOutput(ReleaseOutput):
    items = serializers.SerializerMethodField()
    changelog = serializers.SerializerMethodField()
    downloads = serializers.SerializerMethodField()

    class Meta(ReleaseOutput.Meta):
        fields = [*ReleaseOutput.Meta.fields, "notes", "changelog", "downloads", "items"]

    def get_downloads(self, release) -> list[dict]:
        """Inspect AI scenarios and run exports (transcripts, verdicts, results CSV)."""
        request = self.context.get("request")
        return [
            {**d, "url": request.build_absolute_uri(d["url"]) if request else d["url"]}
            for d in self.context["downloads"]
        ]

    @extend_schema_field(ReleaseItemOutput(many=True))
    def get_items(self, release) -> list[dict]:
        # Plain dicts in ReleaseItemOutput's shape from flat rows: a full release has ~800
        # items, and nested serializers cost ~1.5 ms each (the schema tests check the shape).
        return release_items_data(self.context["items"], self.context["subareas"])

    def get_changelog(self, release) -> dict:
        return self.context["changelog"].as_dict()


def release_items_data(items: Iterable[dict], subareas: Iterable[tuple]) -> list[dict]:
    """Release items as ReleaseItemOutput renders them, from `release_item_values` rows and
    `release_subarea_values` tuples."""
    by_version: dict[int, list[dict]] = {}
    for version_id, slug, name, area in subareas:
        by_version.setdefault(version_id, []).append({"slug": slug, "name": name, "area": area})
    created_at = serializers.DateTimeField()
    version = "metric_version__"
    category = "metric_version__label_category__"
    return [
        {
            "key": row["metric__key"],
            "validation_status": row["metric__validation_status"],
            "version": {
                "number": row[version + "number"],
                "name": row[version + "name"],
                "criterion": row[version + "criterion"],
                "polarity": row[version + "polarity"],
                "subareas": by_version.get(row["metric_version_id"], []),
                "label_category": {
                    "slug": row[category + "slug"],
                    "name": row[category + "name"],
                    "polarity": row[category + "polarity"],
                },
                "rubric_notes": row[version + "rubric_notes"],
                "failure_condition": row[version + "failure_condition"],
                "age_contexts": row[version + "age_contexts"],
                "language": row[version + "language"],
                "change_note": row[version + "change_note"],
                "created_at": created_at.to_representation(row[version + "created_at"]),
            },
        }
        for row in items
    ]
