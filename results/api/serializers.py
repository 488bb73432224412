"""Output shapes of the public results API. Every figure is an Estimate object."""

from django.urls import reverse
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from evaluations.models import Conversation, EvaluationRun, Judgment, Scenario, Turn
from evaluations.provenance import (
    conversation_transcript_source,
    run_source,
    run_transcript_source,
)
from metrics_registry.models import Area, Subarea

from .cost_serializers import cost_field, run_cost_output


class ExclusionOutput(serializers.Serializer):
    reason = serializers.CharField()
    count = serializers.IntegerField()


class EstimateOutput(serializers.Serializer):
    """A published figure: value with interval and n, or no value and the reason."""

    value = serializers.FloatField(allow_null=True)
    low = serializers.FloatField(allow_null=True)
    high = serializers.FloatField(allow_null=True)
    method = serializers.CharField(allow_blank=True)
    confidence = serializers.FloatField()
    n = serializers.IntegerField()
    n_clusters = serializers.IntegerField(allow_null=True)
    excluded = ExclusionOutput(many=True)
    unit = serializers.CharField()
    reason = serializers.CharField(allow_blank=True)

    def to_representation(self, instance):
        return instance.as_dict() if hasattr(instance, "as_dict") else instance


class SubareaBriefOutput(serializers.ModelSerializer):
    class Meta:
        model = Subarea
        fields = ["slug", "name", "description"]


class AreaOutput(serializers.ModelSerializer):
    subareas = SubareaBriefOutput(many=True, read_only=True)

    class Meta:
        model = Area
        fields = ["slug", "name", "description", "subareas"]


class TranscriptSourceOutput(serializers.Serializer):
    """Where transcripts came from; the file's fields only when imported."""

    kind = serializers.ChoiceField(choices=["simulated", "imported"])
    file_name = serializers.CharField(required=False)
    format = serializers.CharField(required=False)
    imported_by = serializers.CharField(required=False)
    imported_at = serializers.DateTimeField(required=False, allow_null=True)
    where = serializers.CharField(required=False)


source_field = extend_schema_field(TranscriptSourceOutput())


class TargetOutput(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    model_id = serializers.CharField(allow_blank=True)
    provider = serializers.CharField()
    is_offline = serializers.BooleanField()


class RunOutput(serializers.ModelSerializer):
    release = serializers.CharField(source="release.version")
    release_title = serializers.CharField(source="release.title")
    judge = serializers.CharField(source="judge.name")
    simulator = serializers.CharField(source="simulator.name")
    targets = TargetOutput(many=True, read_only=True, source="targets.all")
    fidelity = serializers.SerializerMethodField(
        help_text="The run's simulator fidelity figures (`runs/<id>/fidelity/`)."
    )
    cost = serializers.SerializerMethodField(
        help_text="What the run's model calls cost (null before its figures were refreshed)."
    )
    transcript_source = serializers.SerializerMethodField(
        help_text='Where the transcripts came from: {"kind": "simulated"}, or "imported" with '
        "the file's name and format, who imported it and when."
    )

    class Meta:
        model = EvaluationRun
        fields = [
            "id",
            "name",
            "transcript_source",
            "release",
            "release_title",
            "finished_at",
            "judge",
            "simulator",
            "turns",
            "judgments_per_conversation",
            "conversations_total",
            "conversations_completed",
            "conversations_failed",
            "targets",
            "fidelity",
            "cost",
        ]

    @source_field
    def get_transcript_source(self, run: EvaluationRun) -> dict:
        return run_source(run).as_dict()

    def get_fidelity(self, run: EvaluationRun) -> str:
        return reverse("results-api:run-fidelity", args=[run.pk])

    @cost_field
    def get_cost(self, run: EvaluationRun) -> dict | None:
        # Stored with the analysis, which the run's query already joins.
        return run_cost_output(run.analysis.cost)


class ResultOutput(serializers.Serializer):
    """One pass rate of the run: a model on a group of metrics of one polarity and age."""

    target = serializers.IntegerField(source="target_id")
    target_name = serializers.CharField(source="target.name")
    level = serializers.CharField()
    polarity = serializers.CharField()
    age_context = serializers.CharField()
    language = serializers.CharField(
        allow_blank=True, help_text="Blank: every language pooled; a tag: that language alone."
    )
    area = serializers.CharField(source="area.slug", allow_null=True, default=None)
    subarea = serializers.CharField(source="subarea.slug", allow_null=True, default=None)
    metric = serializers.CharField(
        source="metric_version.metric.key", allow_null=True, default=None
    )
    metric_version = serializers.IntegerField(
        source="metric_version.number", allow_null=True, default=None
    )
    n_passed = serializers.IntegerField()
    estimate = EstimateOutput()


class ScenarioOutput(serializers.ModelSerializer):
    metric = serializers.CharField(source="metric_version.metric.key")
    metric_version = serializers.IntegerField(source="metric_version.number")

    class Meta:
        model = Scenario
        fields = [
            "id",
            "metric",
            "metric_version",
            "base_index",
            "age_context",
            "situation",
            "persona",
            "user_goal",
            "latent_adversarial_goal",
            "anchors",
            "failure_condition",
            "is_offline",
        ]


class TurnOutput(serializers.ModelSerializer):
    class Meta:
        model = Turn
        fields = ["index", "user_text", "assistant_text", "anchor_index"]


class JudgmentOutput(serializers.ModelSerializer):
    judge = serializers.CharField(source="judge.name")

    class Meta:
        model = Judgment
        fields = [
            "judge",
            "repetition",
            "present",
            "justification",
            "evidence",
            "has_unverified_quotes",
            "evidence_status",
            "is_offline",
        ]


class ConversationBriefOutput(serializers.ModelSerializer):
    metric = serializers.CharField(source="scenario.metric_version.metric.key")
    age_context = serializers.CharField(source="scenario.age_context")
    base_index = serializers.IntegerField(source="scenario.base_index")
    target_name = serializers.CharField(source="target.name")
    transcript_source = serializers.SerializerMethodField(
        help_text='{"kind": "simulated"}, or "imported" with the file, its format, who '
        'imported it, when, and where in the file the conversation was ("where").'
    )

    class Meta:
        model = Conversation
        fields = [
            "id",
            "run",
            "transcript_source",
            "scenario",
            "metric",
            "base_index",
            "age_context",
            "target",
            "target_name",
            "replicate",
            "status",
            "verdict_present",
            "verdict_passed",
            "panel_tie",
            "is_offline",
        ]

    @source_field
    def get_transcript_source(self, conversation: Conversation) -> dict:
        # One read per run of a page of conversations, not one per imported conversation.
        sources = self.context.setdefault("transcript_sources", {})
        if conversation.is_imported and conversation.run_id not in sources:
            sources[conversation.run_id] = run_transcript_source(conversation.run_id)
        source = conversation_transcript_source(
            conversation, run_source=sources.get(conversation.run_id)
        )
        return source.as_dict()


class ConversationOutput(ConversationBriefOutput):
    scenario = ScenarioOutput(read_only=True)
    turns = TurnOutput(many=True, read_only=True)
    judgments = JudgmentOutput(many=True, read_only=True)
    polarity = serializers.CharField(source="scenario.metric_version.polarity")

    class Meta(ConversationBriefOutput.Meta):
        fields = [*ConversationBriefOutput.Meta.fields, "polarity", "turns", "judgments"]


class WheelCellOutput(serializers.Serializer):
    level = serializers.CharField()
    slug = serializers.CharField()
    name = serializers.CharField()
    estimate = EstimateOutput()


class ExploreOutput(serializers.Serializer):
    run = serializers.IntegerField()
    release = serializers.CharField()
    target = serializers.IntegerField()
    target_name = serializers.CharField()
    age_context = serializers.CharField()
    polarity = serializers.CharField()
    cells = WheelCellOutput(many=True)


class JudgeTrustOutput(serializers.Serializer):
    """Blind expert agreement with the judge, Cohen's kappa and the badge (thresholds on the
    methodology page); ``how_to_fill`` says how experts check a judge not yet checked."""

    badge = serializers.CharField()
    reason = serializers.CharField(allow_blank=True)
    agreement = EstimateOutput(allow_null=True)
    kappa = EstimateOutput(allow_null=True)
    low_agreement = serializers.BooleanField()
    synthetic = serializers.BooleanField()
    how_to_fill = serializers.CharField(allow_blank=True)


class AgreementGapOutput(serializers.Serializer):
    """The judge's blind expert agreement on this model against its agreement on the other
    models on the same metrics (methodology page, "judge trust")."""

    badge = serializers.ChoiceField(
        choices=["agrees_less", "no_gap_shown"],
        help_text="`agrees_less` when the difference's interval lies wholly below 0.",
    )
    label = serializers.CharField(help_text="The badge in words, in the reader's language.")
    agreement_on_model = EstimateOutput()
    agreement_on_others = EstimateOutput(
        help_text="The other models' agreement, each metric weighted as in this model's ratings."
    )
    difference = EstimateOutput(
        help_text="This model's agreement minus the others' (Newcombe interval, "
        "Bonferroni-adjusted over the models compared)."
    )
    synthetic = serializers.BooleanField()


class SelfPreferenceOutput(serializers.Serializer):
    """A judge of the target's own model family graded it."""

    judge = serializers.CharField()
    family = serializers.CharField()


class MetricModelResultOutput(serializers.Serializer):
    target = serializers.IntegerField()
    target_name = serializers.CharField()
    all = EstimateOutput(allow_null=True)
    teen = EstimateOutput(allow_null=True)
    adult = EstimateOutput(allow_null=True)
    judge_trust = JudgeTrustOutput()
    judge_self_preference = SelfPreferenceOutput(allow_null=True)


class MetricResultsOutput(serializers.Serializer):
    run = serializers.IntegerField()
    release = serializers.CharField()
    metric = serializers.CharField()
    metric_version = serializers.IntegerField()
    polarity = serializers.CharField()
    results = MetricModelResultOutput(many=True)
    judge_trust = JudgeTrustOutput()
