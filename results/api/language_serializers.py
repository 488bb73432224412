"""The API's per-language fields: which languages a run's figures are given for, and the paired
comparison of a language with the reference language (`results.services.languages`)."""

from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers
from rest_framework.exceptions import ParseError

from ..language_pages import ALL, LanguageChoice, language_choice
from .serializers import EstimateOutput, ExploreOutput, MetricResultsOutput

LANG_PARAM = OpenApiParameter(
    "lang",
    str,
    required=False,
    description="“all” (default: every language pooled) or one of the run's languages.",
)


def language_param(params, run) -> LanguageChoice:
    """The ``lang`` asked for among the run's languages; any other value is a bad request
    that names the ones there are (as an unknown ``age_context`` is)."""
    choice = language_choice(run, params.get("lang"))
    asked = params.get("lang") or ALL
    if asked != choice.current:
        raise ParseError(f"lang: choose one of {', '.join((ALL, *choice.languages))}.")
    return choice


def languages_output(choice: LanguageChoice) -> dict:
    return {
        "language": choice.current,
        "languages": choice.languages,
        "pooled_languages": choice.pooled_note,
    }


class LanguagesOutput(serializers.Serializer):
    """What the figures of a response count and which languages they can be asked for."""

    language = serializers.CharField(
        help_text="“all” (every language pooled) or the tag of the one language counted."
    )
    languages = serializers.ListField(
        child=serializers.CharField(),
        help_text="The run's languages, each a value of `lang`; empty for a run in one language.",
    )
    pooled_languages = serializers.CharField(
        allow_blank=True,
        help_text="On “all” with several languages, says so "
        "(“pooled across English and Spanish conversations”); blank otherwise.",
    )


class LanguageModelGapOutput(serializers.Serializer):
    target = serializers.IntegerField(source="target_id")
    target_name = serializers.CharField(source="target")
    polarity = serializers.CharField(required=False)
    difference = EstimateOutput(
        help_text="The language's pass rate minus the reference's, paired by situation; "
        "`excluded` counts situations without a counterpart."
    )
    p_value = serializers.FloatField(allow_null=True, required=False)
    q_value = serializers.FloatField(
        allow_null=True,
        required=False,
        help_text="Benjamini-Hochberg adjusted p-value over the release's one family of tests "
        "(teen-adult metric differences and every language comparison).",
    )
    fdr_discovery = serializers.BooleanField(
        required=False, help_text="Survives the false-discovery-rate control: a direction holds."
    )


class LanguageTestOutput(serializers.Serializer):
    p_value = serializers.FloatField(allow_null=True)
    q_value = serializers.FloatField(allow_null=True, required=False)
    fdr_discovery = serializers.BooleanField(required=False)


class LanguageGapOutput(serializers.Serializer):
    """A language compared with the reference on the same situations (base scenario and age),
    model by model; a direction holds only where the interval excludes zero and the difference
    survives the false-discovery-rate control over the release's comparisons
    (``fdr_discovery``)."""

    language = serializers.CharField()
    reference = serializers.CharField()
    method = serializers.CharField()
    overall = serializers.DictField(
        child=EstimateOutput(), required=False, help_text="Per polarity, every model pooled."
    )
    overall_tests = serializers.DictField(
        child=LanguageTestOutput(),
        required=False,
        help_text="Per polarity, the test of the overall difference and its control.",
    )
    difference = EstimateOutput(required=False, help_text="For one metric: its models pooled.")
    p_value = serializers.FloatField(allow_null=True, required=False)
    q_value = serializers.FloatField(allow_null=True, required=False)
    fdr_discovery = serializers.BooleanField(required=False)
    models = LanguageModelGapOutput(many=True)


class ExploreLanguagesOutput(ExploreOutput):
    language = LanguagesOutput()
    language_comparisons = LanguageGapOutput(
        many=True, help_text="Each other language against the reference, overall and per model."
    )


class MetricResultsLanguagesOutput(MetricResultsOutput):
    language = LanguagesOutput()
    language_comparisons = LanguageGapOutput(
        many=True, help_text="Each other language against the reference on this metric."
    )
