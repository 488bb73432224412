"""The plain lead of every public results page: one or two sentences a parent understands,
filled from the figures the page already loaded, and the "how we know" lines (intervals, base
scenarios, methods) that the page shows behind a disclosure.

Fixed templates filled from the data, never written by a model. No function here queries the
database: each page passes the figures it has, so a lead costs no query.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from core.plain import Lead
from stats.estimates import Estimate

from .label import CategoryLine, LabelProfile
from .method_words import method_words

# The overview counts grades of B− or better (right in at least 7 of 10 conversations) and
# D or worse (right in fewer than half): bands a parent can read without the grade table.
GOOD_FROM = 0.70
POOR_BELOW = 0.50


def passed_of(e: Estimate) -> int:
    """Conversations that passed behind a pass rate (the rate is passed / n)."""
    return round((e.value or 0.0) * e.n)


def counted(e: Estimate) -> str:
    """ "53 of 100 conversations", or why there is no figure."""
    if not e.defined:
        return _("too few conversations to say (%(n)s)") % {"n": e.n}
    return ngettext(
        "%(passed)s of %(n)s conversation", "%(passed)s of %(n)s conversations", e.n
    ) % {"passed": passed_of(e), "n": e.n}


def interval_text(e: Estimate) -> str:
    """The figure with its 95 % interval, n, base scenarios and method, in one line."""
    if not e.defined:
        if e.reason:
            return _("no figure (n = %(n)s: %(reason)s)") % {"n": e.n, "reason": e.reason}
        return _("no figure (n = %(n)s)") % {"n": e.n}
    # A list of figures, each part whole: the value, its interval, the count behind it.
    parts = [f"{e.value * 100:.0f} %"]
    if e.has_interval:
        parts.append(
            # Translators: "95 % interval 21–94 %": a confidence interval and its bounds.
            _("%(confidence)s %% interval %(low)s–%(high)s %%")
            % {
                "confidence": f"{e.confidence * 100:.0f}",
                "low": f"{e.low * 100:.0f}",
                "high": f"{e.high * 100:.0f}",
            }
        )
    if e.n_clusters:
        parts.append(
            ngettext(
                "n = %(n)s in %(clusters)s base scenario",
                "n = %(n)s in %(clusters)s base scenarios",
                e.n_clusters,
            )
            % {"n": e.n, "clusters": e.n_clusters}
        )
    else:
        parts.append(f"n = {e.n}")
    text = ", ".join(parts)
    if e.method:
        text += f" ({method_words(e.method)})"
    excluded = sum(x.count for x in e.excluded)
    if excluded:
        text += "; " + _("%(count)s left out (%(reasons)s)") % {
            "count": excluded,
            "reasons": ", ".join(x.reason for x in e.excluded),
        }
    return text


def _pool(estimates: Iterable[Estimate | None]) -> tuple[int, int]:
    """Passed and total over several pass rates of disjoint conversations."""
    passed = n = 0
    for e in estimates:
        if e is not None and e.defined:
            passed += passed_of(e)
            n += e.n
    return passed, n


def metric_lead(polarity: str, results: Sequence) -> Lead:
    """A metric page: all models together, then the lowest and highest model."""
    shown = [(r.target.name, r.all) for r in results if r.all is not None and r.all.defined]
    passed, n = _pool(e for _, e in shown)
    if not n:
        return Lead(
            _("No model has enough judged conversations in this test to give a figure yet.")
        )
    if polarity == "positive":
        sentence = ngettext(
            "The models tested showed the helpful behaviour in %(passed)s of %(n)s conversation.",
            "The models tested showed the helpful behaviour in %(passed)s of %(n)s conversations.",
            n,
        )
    else:
        sentence = ngettext(
            "The models tested avoided the harmful behaviour in %(passed)s of %(n)s conversation.",
            "The models tested avoided the harmful behaviour in %(passed)s of %(n)s conversations.",
            n,
        )
    sentence %= {"passed": passed, "n": n}
    if len(shown) > 1:
        ranked = sorted(shown, key=lambda pair: pair[1].value)
        (low_name, low), (high_name, high) = ranked[0], ranked[-1]
        # Translators: "Model A did so in 5 of 6 conversations; model B in 3 of 6 conversations."
        sentence += " " + _("%(high_name)s did so in %(high)s; %(low_name)s in %(low)s.") % {
            "high_name": high_name,
            "high": counted(high),
            "low_name": low_name,
            "low": counted(low),
        }
    how = tuple(f"{name}: {interval_text(e)}" for name, e in shown)
    return Lead(sentence, how)


def conversation_lead(
    target_name: str, polarity: str, verdict: bool | None, metric: Estimate | None
) -> Lead:
    """One conversation's verdict, then how it compares with the model's other runs of it."""
    positive = polarity == "positive"
    if verdict is None:
        sentence = _("This conversation with %(name)s has no verdict, so it counts in no figure.")
    elif positive:
        sentence = (
            _("In this test conversation, %(name)s showed the helpful behaviour.")
            if verdict
            else _("In this test conversation, %(name)s did not show the helpful behaviour.")
        )
    else:
        sentence = (
            _("In this test conversation, %(name)s avoided the harmful behaviour.")
            if verdict
            else _("In this test conversation, %(name)s did not avoid the harmful behaviour.")
        )
    sentence %= {"name": target_name}
    how: tuple[str, ...] = ()
    if metric is not None and metric.defined:
        if positive:
            overall = _(
                # Translators: count is a phrase such as "4 of 6 conversations".
                "Over all its conversations on this test, it showed the helpful behaviour in "
                "%(count)s."
            )
        else:
            overall = _(
                "Over all its conversations on this test, it avoided the harmful behaviour in "
                "%(count)s."
            )
        sentence += " " + overall % {"count": counted(metric)}
        how = (
            _("%(name)s on this test, teens and adults: %(figure)s")
            % {"name": target_name, "figure": interval_text(metric)},
        )
    return Lead(sentence, how)


def _line_counts(lines: Iterable[CategoryLine]) -> tuple[int, int]:
    return _pool(line.estimate for line in lines)


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


def explore_lead(target_name: str, polarity: str, areas: Sequence[tuple[str, Estimate]]) -> Lead:
    """The wheel of one model: where it did best and worst among the areas shown."""
    shown = [(label, e) for label, e in areas if e is not None and e.defined]
    if not shown:
        return Lead(
            _("%(name)s has too few judged conversations here for a figure.")
            % {"name": target_name}
        )
    ranked = sorted(shown, key=lambda pair: pair[1].value)
    high_label, high = ranked[-1]
    low_label, low = ranked[0]
    positive = polarity == "positive"
    if len(ranked) > 1 and positive:
        sentence = _(
            "In the %(high_area)s area, %(name)s showed the helpful behaviour in %(high)s; in the "
            "%(low_area)s area, in %(low)s."
        )
    elif len(ranked) > 1:
        sentence = _(
            "In the %(high_area)s area, %(name)s avoided the harmful behaviour in %(high)s; in the "
            "%(low_area)s area, in %(low)s."
        )
    elif positive:
        sentence = _(
            "In the %(high_area)s area, %(name)s showed the helpful behaviour in %(high)s."
        )
    else:
        sentence = _(
            "In the %(high_area)s area, %(name)s avoided the harmful behaviour in %(high)s."
        )
    sentence %= {
        "name": target_name,
        "high_area": high_label.lower(),
        "high": counted(high),
        "low_area": low_label.lower(),
        "low": counted(low),
    }
    how = tuple(f"{label}: {interval_text(e)}" for label, e in shown)
    return Lead(sentence, how)


def methodology_lead(overall: Sequence) -> Lead:
    """The methodology page: what all the run's figures rest on, in one sentence."""
    rows = [r for r in overall if r.age_context == "all"]
    models = len({r.target_id for r in rows})
    n = sum(r.n_conversations for r in rows)
    if not n:
        return Lead(_("No judged conversations yet."))
    # Translators: models is a phrase such as "2 models".
    models_text = ngettext("%(m)s model", "%(m)s models", models) % {"m": models}
    return Lead(
        ngettext(
            "The results of this release rest on %(n)s judged test conversation with %(models)s.",
            "The results of this release rest on %(n)s judged test conversations with %(models)s.",
            n,
        )
        % {"n": n, "models": models_text}
        + " "
        + _(
            "Each figure below says how sure we can be: a range of plausible values and the "
            "number of conversations behind it."
        )
    )


def metric_list_lead(release_version: str | None, n_metrics: int) -> Lead:
    """The metric list: how many behaviours the release tests."""
    if release_version:
        sentence = ngettext(
            "Release %(version)s tests AI models on %(n)s behaviour, each in simulated "
            "conversations with teen and adult personas.",
            "Release %(version)s tests AI models on %(n)s behaviours, each in simulated "
            "conversations with teen and adult personas.",
            n_metrics,
        )
    else:
        sentence = ngettext(
            "The registry tests AI models on %(n)s behaviour, each in simulated conversations "
            "with teen and adult personas.",
            "The registry tests AI models on %(n)s behaviours, each in simulated conversations "
            "with teen and adult personas.",
            n_metrics,
        )
    return Lead(
        sentence % {"version": release_version, "n": n_metrics}
        + " "
        + _("Open one to see how often each model did the right thing.")
    )


def rubric_lead(targets: Sequence) -> Lead:
    """Rubric results: the share of a checklist's points each model earned, lowest and highest."""
    scored = [
        (t.target, t.overall.estimate, t.items)
        for t in targets
        if t.overall is not None and t.overall.estimate.defined
    ]
    if not scored:
        return Lead("No model has enough graded replies for a score yet.")
    items = max(items for _, _, items in scored)
    ranked = sorted(scored, key=lambda s: s[1].value)
    models = "1 model's" if len(scored) == 1 else f"{len(scored)} models'"
    sentence = (
        f"Checklists of what a good reply does scored {models} replies to up to {items} "
        "health situations."
    )
    low_name, low, _ = ranked[0]
    high_name, high, _ = ranked[-1]
    if len(ranked) > 1:
        sentence += (
            f" {high_name} earned {high.value * 100:.0f} % of the points a good reply gets; "
            f"{low_name} {low.value * 100:.0f} %."
        )
    else:
        sentence += f" {high_name} earned {high.value * 100:.0f} % of the points a good reply gets."
    how = tuple(f"{name}: {interval_text(e)}" for name, e, _ in scored)
    return Lead(sentence, how)


def priorities_lead(users: int, clinicians: int) -> Lead:
    """Users against clinicians: who was asked; the rank correlation stays behind "how we know"."""
    return Lead(
        f"We compared what {users} user{'s' if users != 1 else ''} say matters in a reply with "
        f"what {clinicians} clinician{'s' if clinicians != 1 else ''} reward, behaviour by "
        "behaviour. The table shows where they agree and where they differ."
    )


def rubric_reply_lead(target_name: str, criteria: Sequence) -> Lead:
    """One graded reply: the checks it met, the things to avoid it did, in counts."""
    counted_rows = [r for r in criteria if r.counted and r.grade is not None]
    wanted = [r for r in counted_rows if r.criterion.points > 0]
    unwanted = [r for r in counted_rows if r.criterion.points < 0]
    if not counted_rows:
        return Lead(f"This reply by {target_name} has no graded checks, so it counts in no score.")
    sentence = (
        f"{target_name}'s reply did {sum(r.grade.met for r in wanted)} of the {len(wanted)} "
        "things a good reply does here"
    )
    if unwanted:
        sentence += (
            f", and {sum(r.grade.met for r in unwanted)} of the {len(unwanted)} things it "
            "should avoid"
        )
    return Lead(sentence + ".")


def rubric_items_lead(n_replies: int, n_scored: int) -> Lead:
    """The replies behind one rubric figure."""
    return Lead(
        f"These are the {n_replies} graded repl{'y' if n_replies == 1 else 'ies'} behind one "
        f"figure: {n_scored} were scored and count in it; each opens the reply and its checks."
    )
