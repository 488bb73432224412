"""Output shapes of the public rubric results API. Every figure is an Estimate object."""

from rest_framework import serializers

from .language_serializers import LanguagesOutput
from .serializers import EstimateOutput


class RubricRunBriefOutput(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    name = serializers.CharField()
    release = serializers.CharField(source="release.version")
    finished_at = serializers.DateTimeField(allow_null=True)


class RubricFigureOutput(serializers.Serializer):
    key = serializers.CharField(allow_blank=True)
    label = serializers.CharField()
    estimate = EstimateOutput()
    bootstrap_std = serializers.FloatField(allow_null=True)
    items_url = serializers.CharField()


class RubricModelOutput(serializers.Serializer):
    model = serializers.CharField()
    model_id = serializers.IntegerField()
    offline_demo = serializers.BooleanField()
    items = serializers.IntegerField()
    overall = RubricFigureOutput()
    dimension = RubricFigureOutput(many=True)
    acuity = RubricFigureOutput(many=True)
    population = RubricFigureOutput(many=True)


class TeenAdultRowOutput(serializers.Serializer):
    key = serializers.CharField(allow_blank=True, help_text='A dimension slug; "" for overall.')
    label = serializers.CharField()
    estimate = EstimateOutput(help_text="Teen items' score minus adult items' score.")
    n_teen = serializers.IntegerField()
    n_adult = serializers.IntegerField()


class TeenAdultModelOutput(serializers.Serializer):
    model = serializers.CharField()
    model_id = serializers.IntegerField()
    language = serializers.CharField(
        help_text="The language of the items compared: teen items against adult items in the "
        "same language only, one entry per model and language."
    )
    rows = TeenAdultRowOutput(many=True)


class RubricRunOutput(RubricRunBriefOutput):
    what_they_are = serializers.CharField()
    what_they_are_not = serializers.CharField()
    frozen_criteria = serializers.IntegerField(allow_null=True)
    models = RubricModelOutput(many=True)
    teen_adult = TeenAdultModelOutput(many=True)


class RubricResponseBriefOutput(serializers.Serializer):
    id = serializers.IntegerField()
    item = serializers.CharField()
    title = serializers.CharField(allow_blank=True)
    acuity = serializers.CharField(allow_blank=True)
    population = serializers.CharField(allow_blank=True)
    model = serializers.CharField()
    status = serializers.CharField()
    score = serializers.FloatField(allow_null=True)
    excluded = serializers.CharField(allow_blank=True)
    url = serializers.CharField()


class CriterionGradeOutput(serializers.Serializer):
    criterion = serializers.CharField()
    points = serializers.IntegerField()
    dimension = serializers.CharField()
    tags = serializers.ListField(child=serializers.CharField())
    criteria_met = serializers.BooleanField(allow_null=True)
    explanation = serializers.CharField(allow_blank=True)
    counted = serializers.BooleanField()
    why = serializers.CharField()


class MessageOutput(serializers.Serializer):
    role = serializers.CharField()
    content = serializers.CharField(allow_blank=True)


class RubricResponseOutput(serializers.Serializer):
    id = serializers.IntegerField()
    run = serializers.IntegerField()
    release = serializers.CharField()
    item = serializers.CharField()
    title = serializers.CharField(allow_blank=True)
    acuity = serializers.CharField(allow_blank=True)
    population = serializers.CharField(allow_blank=True)
    language = serializers.CharField()
    demo_material = serializers.BooleanField()
    model = serializers.CharField()
    offline_demo = serializers.BooleanField()
    status = serializers.CharField()
    prompt = MessageOutput(many=True)
    reply = serializers.CharField(allow_blank=True)
    score = serializers.FloatField(allow_null=True)
    criteria = CriterionGradeOutput(many=True)


class PriorityRowOutput(serializers.Serializer):
    dimension = serializers.CharField()
    label = serializers.CharField()
    user_priority = EstimateOutput()
    user_share = EstimateOutput(source="user_share_estimate")
    user_rank = serializers.FloatField(allow_null=True)
    clinician_weight = serializers.FloatField()
    clinician_share = serializers.FloatField(allow_null=True)
    clinician_rank = serializers.FloatField(allow_null=True)
    difference = EstimateOutput()


class ReweightedOutput(serializers.Serializer):
    model = serializers.CharField()
    benchmark = EstimateOutput()
    clinicians = EstimateOutput()
    users = EstimateOutput()


class RubricPrioritiesOutput(serializers.Serializer):
    run = serializers.IntegerField()
    language = LanguagesOutput()
    users = serializers.IntegerField()
    clinicians = serializers.IntegerField()
    ratings = serializers.IntegerField()
    kendall_tau = EstimateOutput(source="kendall_tau_estimate")
    rows = PriorityRowOutput(many=True)
    reweighted = ReweightedOutput(many=True)
    note = serializers.CharField()
