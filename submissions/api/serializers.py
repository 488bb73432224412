from rest_framework import serializers

from ..models import Citation, MetricCandidate, Submission


class CitationOutput(serializers.ModelSerializer):
    class Meta:
        model = Citation
        fields = ["kind", "value", "href"]


class CandidateOutput(serializers.ModelSerializer):
    subareas = serializers.SlugRelatedField(many=True, read_only=True, slug_field="slug")
    label_category = serializers.SlugRelatedField(read_only=True, slug_field="slug")
    # Null until the candidate is accepted into a metric.
    metric = serializers.SlugRelatedField(read_only=True, slug_field="key", allow_null=True)

    class Meta:
        model = MetricCandidate
        fields = [
            "id",
            "short_name",
            "criterion",
            "polarity",
            "subareas",
            "label_category",
            "rationale",
            "status",
            "fidelity",
            "metric",
            "drafted_offline",
        ]


class SubmissionOutput(serializers.ModelSerializer):
    suggested_subareas = serializers.SlugRelatedField(many=True, read_only=True, slug_field="slug")
    citations = CitationOutput(many=True, read_only=True)
    candidates = CandidateOutput(many=True, read_only=True)

    class Meta:
        model = Submission
        fields = [
            "id",
            "title",
            "behavior",
            "context",
            "supportive_examples",
            "harmful_examples",
            "justification",
            "citations",
            "age_context",
            "suggested_subareas",
            "expertise",
            "credit_name",
            "status",
            "submitted_at",
            "created_at",
            "updated_at",
            "drafting_error",
            "candidates",
        ]
