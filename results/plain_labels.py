"""The plain leads of the label pages: a model's label, one category, two labels side by side
and the overview of every model (see `results.plain`, whose rules and wording they share)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from core.plain import Lead

from .label import CategoryLine, LabelProfile
from .plain import GOOD_FROM, POOR_BELOW, counted, interval_text, pooled_counts


def _line_counts(lines: Iterable[CategoryLine]) -> tuple[int, int]:
    return pooled_counts(line.estimate for line in lines)


def population_words(age: str) -> str:
    """Whose conversations a label shows, in the reader's language (`results.label.AGE_WORDS`
    keeps the English words for the label's image files)."""
    if age == "teen":
        return _("teen personas (13–17) only")
    if age == "adult":
        return _("adult personas (18+) only")
    return _("teen and adult personas")


def label_lead(profile: LabelProfile) -> Lead:
    """A label: harm avoided and help shown over all categories, the best and weakest grade."""
    name = profile.target.name
    avoided, avoided_n = _line_counts(profile.by_polarity("negative"))
    showed, showed_n = _line_counts(profile.by_polarity("positive"))
    if not avoided_n and not showed_n:
        return Lead(
            _("%(name)s has too few judged conversations here to give a grade.") % {"name": name}
        )
    if avoided_n and showed_n:
        sentence = _(
            "Tested with %(population)s, %(name)s avoided the harmful behaviour in %(avoided)s of "
            "%(avoided_n)s conversations and showed the helpful behaviour in %(showed)s of "
            "%(showed_n)s conversations."
        )
    elif avoided_n:
        sentence = _(
            "Tested with %(population)s, %(name)s avoided the harmful behaviour in %(avoided)s of "
            "%(avoided_n)s conversations."
        )
    else:
        sentence = _(
            "Tested with %(population)s, %(name)s showed the helpful behaviour in %(showed)s of "
            "%(showed_n)s conversations."
        )
    sentence %= {
        "population": population_words(profile.age),
        "name": name,
        "avoided": avoided,
        "avoided_n": avoided_n,
        "showed": showed,
        "showed_n": showed_n,
    }
    graded = [line for line in profile.lines if line.estimate.defined]
    if len(graded) > 1 and len({line.grade for line in graded}) == 1:
        sentence += " " + _("Every grade is %(grade)s.") % {"grade": graded[0].grade}
    elif len(graded) > 1:
        ranked = sorted(graded, key=lambda line: line.estimate.value)
        best, worst = ranked[-1], ranked[0]
        sentence += " " + _(
            "Best grade: %(best)s for %(best_category)s; weakest: %(worst)s for %(worst_category)s."
        ) % {
            "best": best.grade,
            "best_category": best.category.name.lower(),
            "worst": worst.grade,
            "worst_category": worst.category.name.lower(),
        }
    how = tuple(f"{line.category.name}: {interval_text(line.estimate)}" for line in graded)
    return Lead(sentence, how)


def category_lead(profile: LabelProfile, line: CategoryLine) -> Lead:
    """A label category of one model."""
    e = line.estimate
    name = profile.target.name
    population = population_words(profile.age)
    if not e.defined:
        return Lead(
            _("Too few conversations to give %(name)s a grade here (%(population)s).")
            % {"name": name, "population": population}
        )
    if line.category.polarity == "positive":
        sentence = _(
            # Translators: count is a phrase such as "4 of 6 conversations".
            "%(name)s showed the helpful behaviour (%(category)s) in %(count)s with "
            "%(population)s: grade %(grade)s."
        )
    else:
        sentence = _(
            "%(name)s avoided the harmful behaviour (%(category)s) in %(count)s with "
            "%(population)s: grade %(grade)s."
        )
    sentence %= {
        "name": name,
        "category": line.category.name.lower(),
        "count": counted(e),
        "population": population,
        "grade": line.grade_text,
    }
    return Lead(sentence, (f"{line.category.name}: {interval_text(e)}",))


def compare_lead(a: LabelProfile, b: LabelProfile) -> Lead:
    """Two labels side by side: each model's harm avoided and help shown."""
    sentences = []
    for polarity in ("negative", "positive"):
        a_passed, a_n = _line_counts(a.by_polarity(polarity))
        b_passed, b_n = _line_counts(b.by_polarity(polarity))
        if a_n and b_n:
            if polarity == "positive":
                sentence = _(
                    "%(a)s showed the helpful behaviour in %(a_passed)s of %(a_n)s conversations, "
                    "%(b)s in %(b_passed)s of %(b_n)s."
                )
            else:
                sentence = _(
                    "%(a)s avoided the harmful behaviour in %(a_passed)s of %(a_n)s conversations, "
                    "%(b)s in %(b_passed)s of %(b_n)s."
                )
            sentences.append(
                sentence
                % {
                    "a": a.target.name,
                    "a_passed": a_passed,
                    "a_n": a_n,
                    "b": b.target.name,
                    "b_passed": b_passed,
                    "b_n": b_n,
                }
            )
    if not sentences:
        return Lead(_("These two models have too few judged conversations to compare."))
    how = tuple(
        f"{p.target.name} · {line.category.name}: {interval_text(line.estimate)}"
        for p in (a, b)
        for line in p.lines
        if line.estimate.defined
    )
    return Lead(" ".join(sentences), how)


def overview_lead(rows: Sequence[tuple[LabelProfile, Sequence[CategoryLine | None]]]) -> Lead:
    """Every model's grades: how many are good and how many poor, without ranking anyone."""
    lines = [line for _row, model_lines in rows for line in model_lines if line is not None]
    graded = [line for line in lines if line.estimate.defined]
    if not graded:
        return Lead(_("No model has enough judged conversations for a grade yet."))
    good = sum(1 for line in graded if line.estimate.value >= GOOD_FROM - 1e-9)
    poor = sum(1 for line in graded if line.estimate.value < POOR_BELOW - 1e-9)
    categories = len({line.category.pk for line in graded})
    sentence = ngettext(
        "%(n)s model graded on %(categories)s kinds of behaviour: in %(good)s of the %(graded)s "
        "grades the model did the right thing in at least 7 of 10 conversations (B− or better); "
        "in %(poor)s, in fewer than half (D or worse).",
        "%(n)s models graded on %(categories)s kinds of behaviour: in %(good)s of the %(graded)s "
        "grades the model did the right thing in at least 7 of 10 conversations (B− or better); "
        "in %(poor)s, in fewer than half (D or worse).",
        len(rows),
    ) % {
        "n": len(rows),
        "categories": categories,
        "good": good,
        "graded": len(graded),
        "poor": poor,
    }
    return Lead(sentence)
