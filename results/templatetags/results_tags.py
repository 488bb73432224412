"""Formatting of rates and intervals: one place, so every page prints them the same way.

Every published figure is rendered by ``{% estimate e %}``: the value, its interval, its n and
what was excluded, or "not enough data" where the figure cannot be supported.
"""

from collections.abc import Mapping
from decimal import Decimal

from django import template
from django.urls import reverse
from django.utils.formats import number_format
from django.utils.http import urlencode
from django.utils.translation import gettext, gettext_noop

from evaluations.provenance import (
    TranscriptSource,
    conversation_transcript_source,
    run_source,
)
from stats.estimates import Estimate

from ..grades import percent_words
from ..method_words import method_words
from ..services.swap_study import GRADE_BAND_WIDTH, HELD_RULE, swap_verdict_text
from ..stored_words import polarity_words, stored_words, weighting_words

register = template.Library()


def decimal(value: float, digits: int, *, sign: bool = False, grouping: bool = False) -> str:
    """`value` rounded to `digits` places in the active language's notation ("66.7" in
    English, "66,7" in Spanish). Rounded by Python first so that every language shows the
    same digits; what machines read (data attributes, API, exports) never comes through here."""
    rounded = f"{value:+.{digits}f}"
    text = number_format(Decimal(rounded[1:]), digits, force_grouping=grouping)
    return (rounded[0] if sign or rounded[0] == "-" else "") + text


@register.filter
def pct(value, digits: int = 1) -> str:
    """0.6875 -> "68.8 %" ("68,8 %" in Spanish); None (undefined) -> "—"."""
    if value is None:
        return "—"
    return f"{decimal(float(value) * 100, int(digits))} %"


@register.filter
def num(value, digits: int = 3) -> str:
    if value is None:
        return "—"
    return decimal(float(value), int(digits))


@register.simple_tag
def interval(low, high, percent: bool = True) -> str:
    """ "[64.1 %, 71.0 %]", or "no interval" when it could not be drawn."""
    if low is None or high is None:
        return gettext("no interval")
    if percent:
        return f"[{pct(low)}, {pct(high)}]"
    return f"[{num(low)}, {num(high)}]"


def format_figure(value: float | None, unit: str) -> str:
    """One number in the unit's own notation: percent, percentage points, or a coefficient."""
    if value is None:
        return "—"
    if unit == "proportion":
        return pct(value)
    if unit == "difference":
        return f"{decimal(value * 100, 1, sign=True)} pp"
    if unit == "count":
        return decimal(value, 0, grouping=True)
    return decimal(value, 3)


def as_estimate(value) -> Estimate | None:
    if isinstance(value, Estimate):
        return value
    if isinstance(value, Mapping):
        return Estimate.from_dict(value)
    return None


@register.filter
def figure(e) -> str:
    """The value of an estimate alone, e.g. for a chart label ("—" when not defined)."""
    est = as_estimate(e)
    return format_figure(est.value if est else None, est.unit if est else "proportion")


def _raw(value: float | None) -> str:
    """A bound as the page's machine-readable mark holds it: full precision, "" when absent."""
    return "" if value is None else repr(float(value))


@register.filter
def sure_words(e) -> str:
    """How sure a rate or score is, in words (`results.grades.percent_words`)."""
    est = as_estimate(e)
    return percent_words(est) if est is not None else ""


@register.inclusion_tag("results/_estimate.html")
def estimate(e, *key, compact: bool = False, label: str = "", words: bool = False) -> dict:
    """Render an Estimate (or its stored dict): value, interval, n, exclusions; with `words`,
    then how sure it is in a plain phrase ("plausibly 31 % to 52 %").

    ``key`` (optional positional parts, e.g. ``"pass rate" row.target_id row.polarity``) names
    the figure, so that a figure shown on several pages can be checked to carry one interval
    everywhere (`results.services.figure_audit`); every figure also carries its value, bounds
    and unit as data attributes for that audit.
    """
    est = as_estimate(e)
    if est is None:
        est = Estimate.insufficient(reason=gettext_noop("not computed"))
    return {
        "e": est,
        "compact": compact,
        "label": label,
        "key": ":".join(str(part) for part in key),
        "raw": {"value": _raw(est.value), "low": _raw(est.low), "high": _raw(est.high)},
        "value": format_figure(est.value, est.unit),
        "low": format_figure(est.low, est.unit),
        "high": format_figure(est.high, est.unit),
        "confidence": f"{est.confidence * 100:.0f} %",
        "method": method_words(est.method),
        "words": percent_words(est) if words and est.unit == "proportion" else "",
    }


@register.filter
def pp(value, digits: int = 1) -> str:
    """A difference of two rates in percentage points: 0.052 -> "+5.2 pp"; None -> "—"."""
    if value is None:
        return "—"
    return f"{decimal(float(value) * 100, int(digits), sign=True)} pp"


@register.filter
def points(value, digits: int = 0) -> str:
    """The size of a difference of rates in percentage points, unsigned: 0.152 -> "15";
    None -> "—"."""
    if value is None:
        return "—"
    return decimal(abs(float(value)) * 100, int(digits))


@register.simple_tag
def pp_interval(low, high) -> str:
    """ "[−3.1, +8.0] pp", or "no interval" when it could not be drawn."""
    if low is None or high is None:
        return gettext("no interval")
    low_text = decimal(float(low) * 100, 1, sign=True)
    return f"[{low_text}, {decimal(float(high) * 100, 1, sign=True)}] pp"


@register.filter
def stored_text(text: object) -> str:
    """A sentence stored in English with the figures (a reason, an exclusion), in the
    reader's language (`results.stored_words`)."""
    return stored_words(text)


@register.filter
def polarity_name(polarity: object) -> str:
    """ "positive" / "negative" in the reader's language."""
    return polarity_words(polarity)


@register.filter
def weighting_name(scheme: object) -> str:
    """A robustness weighting's stored name in the reader's language."""
    return weighting_words(scheme)


@register.filter
def method_name(method: str | None) -> str:
    """A stored interval method's name in the reader's language."""
    return method_words(method)


@register.inclusion_tag("results/_synthetic_badge.html")
def synthetic_badge(subject: object = True) -> dict:
    """Like ``{% offline_badge %}``: shown when `subject` (a release, model configuration or
    run with a ``synthetic`` flag, or a bool) is synthetic data."""
    show = getattr(subject, "synthetic", subject)
    return {"show": bool(show)}


@register.filter
def swap_verdict(line: Mapping) -> str:
    """What a swap study's line says of the model's grade, in the reader's language."""
    return swap_verdict_text(line)


@register.simple_tag
def grade_band_points() -> str:
    """The width of one grade band in percentage points (the swap studies' rule)."""
    return f"{GRADE_BAND_WIDTH * 100:.0f}"


@register.simple_tag
def swap_held_rule() -> str:
    """The rule in force for calling a grade held, in the reader's language (a study's stored
    figures keep the text of the refresh that drew them)."""
    return str(HELD_RULE)


@register.simple_tag(takes_context=True)
def public_url(context, view_name: str, *args, fragment: str = "", **params) -> str:
    """A public results page's address with its query (``run=``, ``model=``...), carrying the
    reader's teen/adult choice (``reader_age`` in the context, set by the pages that read it):
    a reader who chose teens keeps that choice from page to page until they change it; the
    same for the language (``reader_lang``)."""
    query = {key: value for key, value in params.items() if value not in (None, "")}
    if context.get("reader_age"):
        query["age"] = context["reader_age"]
    if context.get("reader_lang"):
        query["lang"] = context["reader_lang"]
    url = reverse(view_name, args=args)
    if query:
        url = f"{url}?{urlencode(query)}"
    return f"{url}#{fragment}" if fragment else url


@register.simple_tag
def transcript_source(run, conversation=None) -> TranscriptSource:
    """Where the transcripts behind a run's figures (or one conversation) came from."""
    if run is None:
        return TranscriptSource()
    source = run_source(run)
    if conversation is None:
        return source
    return conversation_transcript_source(conversation, run_source=source)
