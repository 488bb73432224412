"""Output shapes of a run's judge panel in the public results API: each judge's readings,
their agreement and the share of readings whose evidence supports the verdict."""

from rest_framework import serializers

from .serializers import EstimateOutput


class PanelJudgeOutput(serializers.Serializer):
    position = serializers.IntegerField(help_text="0 for the run's own judge.")
    name = serializers.CharField()
    repetitions = serializers.IntegerField()
    is_offline = serializers.BooleanField()


class PanelAgreementOutput(serializers.Serializer):
    ordinal = EstimateOutput(help_text="Krippendorff's alpha, ordinal level.")
    binary = EstimateOutput(help_text="Krippendorff's alpha on pass/fail.")


class PanelMetricAgreementOutput(PanelAgreementOutput):
    metric_version = serializers.IntegerField()
    metric = serializers.CharField()
    n_conversations = serializers.IntegerField()


class PanelRateOutput(serializers.Serializer):
    target = serializers.IntegerField()
    target_name = serializers.CharField()
    pass_rate = EstimateOutput()


class PanelJudgeRateOutput(PanelRateOutput):
    judge = serializers.CharField()
    position = serializers.IntegerField()
    minus_panel = EstimateOutput(
        help_text="The judge's pass rate minus the panel's on the same conversations."
    )


class EvidenceStatusCountOutput(serializers.Serializer):
    status = serializers.CharField()
    label = serializers.CharField()
    count = serializers.IntegerField()


class JudgeEvidenceSupportOutput(serializers.Serializer):
    judge = serializers.CharField()
    supported = EstimateOutput(
        help_text="Share of the judge's readings whose quotes support its verdict."
    )
    readings = serializers.IntegerField()
    by_status = EvidenceStatusCountOutput(many=True)


class RunPanelOutput(serializers.Serializer):
    """A run's panel of judges: agreement among them and each judge's own pass rates."""

    run = serializers.IntegerField()
    available = serializers.BooleanField()
    reason = serializers.CharField(required=False)
    judges = PanelJudgeOutput(many=True, required=False)
    n_conversations = serializers.IntegerField(required=False)
    n_clusters = serializers.IntegerField(required=False)
    ties = serializers.IntegerField(
        required=False, help_text="Conversations the judges split evenly on (no verdict)."
    )
    method = serializers.CharField(required=False)
    overall = PanelAgreementOutput(required=False)
    per_metric = PanelMetricAgreementOutput(many=True, required=False)
    panel_rates = PanelRateOutput(many=True, required=False)
    judge_rates = PanelJudgeRateOutput(many=True, required=False)
    evidence_support = JudgeEvidenceSupportOutput(many=True, required=False)
