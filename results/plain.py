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


def interval_text(e: Estimate, *, of_items: bool = False) -> str:
    """The figure with its 95 % interval, n, base scenarios and method, in one line.

    `of_items`: n counts rubric items (a checklist score is the mean over its items), not
    conversations clustered in base scenarios."""
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
    if of_items:
        parts.append(ngettext("n = %(n)s rubric item", "n = %(n)s rubric items", e.n) % {"n": e.n})
    elif e.n_clusters and e.n_clusters != e.n:
        parts.append(
            ngettext(
                "n = %(n)s in %(clusters)s base scenario",
                "n = %(n)s in %(clusters)s base scenarios",
                e.n_clusters,
            )
            % {"n": e.n, "clusters": e.n_clusters}
        )
    else:
        # As many clusters as conversations (or none): the count says it all.
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


def pooled_counts(estimates: Iterable[Estimate | None]) -> tuple[int, int]:
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
    passed, n = pooled_counts(e for _, e in shown)
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
