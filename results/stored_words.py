"""Sentences stored in English with a run's figures, shown in the reader's language.

A refresh stores its reasons ("why this figure is missing", "what was excluded") inside the
figures' JSON, written once for readers of every language. The services write each such
sentence as a gettext_noop-marked constant, so the stored English is itself the catalogue's
message id and a page translates it when it renders (`stored_words`). The few sentences the
Django-free `stats` package writes with a number inside are matched here and rebuilt as whole
translated sentences; anything else (a name, an older run's wording) is shown as stored.
"""

import re
from collections.abc import Callable
from decimal import Decimal

from django.utils.formats import number_format
from django.utils.translation import gettext, gettext_noop, ngettext, pgettext

_SHARE = r"experts agree with the judge on (\d+)% \(lower bound (\d+)%\)"


def _kappa(text: str) -> str:
    return number_format(Decimal(text), len(text.partition(".")[2]))


# The stats package's own wordings with a number in them (stats.ppi, stats.judge_trust's
# badge reasons), each rebuilt as one whole sentence from the numbers it holds.
_PATTERNS: list[tuple[re.Pattern[str], Callable[[re.Match[str]], str]]] = [
    (  # results.rubric_teen_adult's reason for a difference it cannot give
        re.compile(r"^fewer than two items on a side \(teen (\d+), adult (\d+)\)$"),
        lambda m: (
            gettext("fewer than two items on a side (teen %(teen)s, adult %(adult)s)")
            % {"teen": m[1], "adult": m[2]}
        ),
    ),
    (
        re.compile(r"^(\d+) blind expert verdicts so far; a badge needs (\d+)$"),
        lambda m: (
            ngettext(
                "%(n)s blind expert verdict so far; a badge needs %(needed)s",
                "%(n)s blind expert verdicts so far; a badge needs %(needed)s",
                int(m[1]),
            )
            % {"n": m[1], "needed": m[2]}
        ),
    ),
    (
        re.compile(
            r"^experts agree with the judge on (\d+)%, but no interval could be drawn, so it "
            r"cannot be validated$"
        ),
        lambda m: (
            gettext(
                "experts agree with the judge on %(share)s %%, but no interval could be drawn, so "
                "it cannot be validated"
            )
            % {"share": m[1]}
        ),
    ),
    (
        re.compile(f"^{_SHARE}, below the (\\d+)% needed$"),
        lambda m: (
            gettext(
                "experts agree with the judge on %(share)s %% (lower bound %(low)s %%), below the "
                "%(needed)s %% needed"
            )
            % {"share": m[1], "low": m[2], "needed": m[3]}
        ),
    ),
    (
        re.compile(f"^{_SHARE}, but kappa is undefined: every verdict was the same$"),
        lambda m: (
            gettext(
                "experts agree with the judge on %(share)s %% (lower bound %(low)s %%), but kappa "
                "is undefined: every verdict was the same"
            )
            % {"share": m[1], "low": m[2]}
        ),
    ),
    (
        re.compile(f"^{_SHARE}, but only ([\\d.]+) beyond chance \\(kappa; ([\\d.]+) needed\\)$"),
        lambda m: (
            gettext(
                "experts agree with the judge on %(share)s %% (lower bound %(low)s %%), but only "
                "%(kappa)s beyond chance (kappa; %(needed)s needed)"
            )
            % {"share": m[1], "low": m[2], "kappa": _kappa(m[3]), "needed": _kappa(m[4])}
        ),
    ),
    (
        re.compile(f"^{_SHARE}, kappa (-?[\\d.]+)$"),
        lambda m: (
            gettext(
                "experts agree with the judge on %(share)s %% (lower bound %(low)s %%), kappa "
                "%(kappa)s"
            )
            % {"share": m[1], "low": m[2], "kappa": _kappa(m[3])}
        ),
    ),
    (
        re.compile(r"^fewer than (\d+) expert verdicts in (\d+) sampling strat(?:um|a)$"),
        lambda m: (
            ngettext(
                "fewer than %(minimum)s expert verdicts in %(n)s sampling stratum",
                "fewer than %(minimum)s expert verdicts in %(n)s sampling strata",
                int(m[2]),
            )
            % {"minimum": m[1], "n": m[2]}
        ),
    ),
]

# A scenario's label as `evaluations.Scenario.label` writes it, in English ("Situation 3, teen
# (13–17)"): its age is one of the age contexts' labels, lower-cased.
_AGES = {
    "teen (13–17)": lambda: pgettext("scenario label", "teen (13–17)"),
    "adult (18+)": lambda: pgettext("scenario label", "adult (18+)"),
}
_AGE = "(" + "|".join(re.escape(age) for age in _AGES) + ")"
_PATTERNS += [
    (
        re.compile(rf"^Situation (\d+), {_AGE}$"),
        lambda m: gettext("Situation %(number)s, %(age)s") % {"number": m[1], "age": _AGES[m[2]]()},
    ),
    (
        re.compile(rf"^Situation unknown \(imported\), {_AGE}$"),
        lambda m: gettext("Situation unknown (imported), %(age)s") % {"age": _AGES[m[1]]()},
    ),
]

# Scenario words stored in English (`evaluations.models.scenarios`' choices), shown through
# `stored_words` on the pages.
SCENARIO_WORDS = (
    gettext_noop("Situation unknown (imported)"),
    gettext_noop("Teen (13–17)"),
    gettext_noop("Adult (18+)"),
)

# Reasons the stats package stores without a number; marked here since `stats` imports no
# Django (the catalogue needs them written out somewhere makemessages reads).
STATS_REASONS = (
    gettext_noop("not enough data"),
    gettext_noop("expert verdicts from fewer than two base scenarios"),
    gettext_noop("fewer than two ratings"),
    gettext_noop("judge or expert verdict missing"),
    gettext_noop("scenario run in one arm only"),
    gettext_noop("single reading missing or majority tied"),
    gettext_noop("the panel tied"),
    gettext_noop("verdict missing in one arm"),
    gettext_noop("fewer than two labelled items"),
    gettext_noop("no base scenario judged in both variants"),
    gettext_noop("undefined (no variation)"),
)

# The weightings' names as `results.services.robustness` stores them ("default" is
# translated with a context of its own, being a word of many uses).
WEIGHTINGS = frozenset(
    {
        gettext_noop("equal per metric"),
        gettext_noop("equal per source benchmark"),
        gettext_noop("equal per subarea"),
        gettext_noop("source benchmarks' own weights"),
    }
)
_LEAVE_OUT = "leave out "


def stored_words(text: object) -> str:
    """A stored English sentence in the active language; unknown text as stored."""
    if not isinstance(text, str) or not text:
        return "" if text is None else str(text)
    for pattern, words in _PATTERNS:
        match = pattern.match(text)
        if match:
            return words(match)
    return gettext(text)


def polarity_words(polarity: object) -> str:
    """A stored polarity ("positive", "negative", or "all" of both) in the active language."""
    if polarity == "positive":
        return pgettext("polarity", "positive")
    if polarity == "negative":
        return pgettext("polarity", "negative")
    if polarity == "all":
        # Translators: both polarities together, in a table's polarity column.
        return pgettext("polarity", "all")
    return "" if polarity is None else str(polarity)


def weighting_words(scheme: object) -> str:
    """A robustness weighting's stored name (`results.services.robustness`) in the active
    language; "leave out <source>" keeps the source benchmark's own name."""
    if not isinstance(scheme, str):
        return "" if scheme is None else str(scheme)
    if scheme == "default":
        return pgettext("weighting", "default")
    if scheme in WEIGHTINGS:
        return gettext(scheme)
    if scheme.startswith(_LEAVE_OUT):
        # Translators: a robustness weighting that drops one source benchmark's metrics.
        return gettext("leave out %(source)s") % {"source": scheme[len(_LEAVE_OUT) :]}
    return scheme
