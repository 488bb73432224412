"""Output shapes of the label and the calibrated rates in the public results API."""

from rest_framework import serializers

from .serializers import AgreementGapOutput, EstimateOutput, JudgeTrustOutput, SelfPreferenceOutput


class LabelLineOutput(serializers.Serializer):
    category = serializers.CharField()
    category_name = serializers.CharField()
    polarity = serializers.CharField()
    grade = serializers.CharField()
    thin_evidence = serializers.BooleanField()
    n_metrics = serializers.IntegerField()
    estimate = EstimateOutput()
    judge_trust = JudgeTrustOutput()


class CalibratedRateOutput(serializers.Serializer):
    target = serializers.IntegerField()
    target_name = serializers.CharField()
    polarity = serializers.ChoiceField(choices=["all", "positive", "negative"])
    judge_only = EstimateOutput(help_text="The judge's pass rate over every judged conversation.")
    calibrated = EstimateOutput(
        help_text="The pass rate corrected by blind expert verdicts on the calibration sample "
        "(prediction-powered inference, clustered by base scenario); n = expert-rated "
        "conversations."
    )
    n_judged = serializers.IntegerField()
    n_calibration_sample = serializers.IntegerField()
    n_expert_rated = serializers.IntegerField()
    base_scenarios_rated = serializers.IntegerField()
    excluded_without_verdict = serializers.IntegerField()
    on_label = serializers.BooleanField()
    ratings_needed_for_label = serializers.IntegerField()
    base_scenarios_needed_for_label = serializers.IntegerField()
    language = serializers.CharField(
        allow_blank=True,
        help_text="Blank for a rate over every language; a BCP 47 tag for a rate over the "
        "conversations in that language alone.",
    )


class LabelOutput(serializers.Serializer):
    run = serializers.IntegerField()
    release = serializers.CharField()
    target = serializers.IntegerField()
    target_name = serializers.CharField()
    n_metrics = serializers.IntegerField()
    n_conversations = serializers.IntegerField()
    teen_conversations = serializers.IntegerField()
    adult_conversations = serializers.IntegerField()
    lines = LabelLineOutput(many=True)
    judge_self_preference = SelfPreferenceOutput(allow_null=True)
    judge_agreement_gap = AgreementGapOutput(
        allow_null=True,
        help_text="Whether the judge agrees less with blind experts on this model than on the "
        "others (null before two models have blind verdicts).",
    )
    strengths = serializers.ListField(child=serializers.CharField())
    weaknesses = serializers.ListField(child=serializers.CharField())
    calibration = CalibratedRateOutput(
        allow_null=True,
        help_text="The model's expert-calibrated pass rate beside its judge-only one (all "
        "polarities; null until a calibration sample is drawn); `on_label` says whether it is "
        "large enough for the label.",
    )
    calibration_reason = serializers.CharField(
        help_text="Why the label shows no calibrated rate (blank when it shows one)."
    )


class CalibrationThresholdOutput(serializers.Serializer):
    min_expert_verdicts = serializers.IntegerField()
    min_base_scenarios = serializers.IntegerField()
    text = serializers.CharField()


class RunCalibrationOutput(serializers.Serializer):
    """Judge-only and expert-calibrated pass rates per target and polarity, side by side."""

    run = serializers.IntegerField()
    calibration_queue = serializers.IntegerField(
        allow_null=True, help_text="The calibration sample's queue; null until one is drawn."
    )
    expert_rated = serializers.IntegerField()
    synthetic = serializers.BooleanField()
    threshold = CalibrationThresholdOutput()
    reason = serializers.CharField(
        allow_blank=True,
        help_text="Why no calibrated figure shows yet: no sample drawn, or none of it rated "
        "(blank once experts have rated).",
    )
    how_to_fill = serializers.CharField(
        allow_blank=True,
        help_text="The steps that fill the calibrated rates, while none is rated (else blank).",
    )
    excluded = serializers.CharField()
    rates = CalibratedRateOutput(many=True)
    pooled_languages = serializers.CharField(
        allow_blank=True,
        help_text="When the run's judged conversations span several languages, the words "
        "saying that `rates` pool them (e.g. “pooled across English and Spanish items”); "
        "blank for one language.",
    )
    rates_by_language = CalibratedRateOutput(
        many=True,
        help_text="Each target's rate (both polarities) over each language alone; empty when "
        "the run's judged conversations are in one language.",
    )
