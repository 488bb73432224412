"""Reliability of a run, from stored rows: judge repeatability, expert-vs-judge agreement,
anchor coverage consistency across replicate simulations.

Every figure carries its interval (cluster bootstrap over base scenarios) and the number of
items behind it; a figure that the data cannot support says why instead of showing a number.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from django.utils.translation import gettext_noop

import stats as statistics
from evaluations.models import Conversation, EvaluationRun
from review.selectors import blind_verdict_ratings, judge_visible_verdict_ratings
from stats.estimates import Exclusion

from .anchors import anchor_consistency as measured

# Judge repeatability has its own module; importers of it from here keep working.
from .repeatability import (  # noqa: F401
    JUDGMENT_COLUMNS,
    _repeatability_figures,
    judge_repeatability,
    judgment_counts,
)

VerdictRow = tuple[int, int, bool | None]


def expert_verdict_rows(
    run: EvaluationRun, which: tuple[str, ...] = ("blind", "judge_visible")
) -> dict[str, list[VerdictRow]]:
    """Expert verdicts on the run's conversations, kept apart by whether the judge was visible.

    ``blind``: external-panel ratings (the expert never saw the judge's verdict), the only ones
    behind the published validity figure. ``judge_visible``: judge-verdict-queue ratings, which
    measure endorsement of the judge and are reported separately. ``which`` names the kinds
    to read (a refresh of one of the two figures reads only its own).
    """

    def clean(rows: list[VerdictRow]) -> list[VerdictRow]:
        return [(int(c), int(r), v if v is None else bool(v)) for c, r, v in rows]

    selectors = {"blind": blind_verdict_ratings, "judge_visible": judge_visible_verdict_ratings}
    return {name: clean(selectors[name](run=run)) for name in which}


def rated_verdicts(run: EvaluationRun, rows: list[VerdictRow] | None) -> dict[int, tuple]:
    """The judge's verdict and base scenario of each rated conversation that has one:
    ``{conversation: (present, "version:base")}`` (what `expert_agreement` compares with)."""
    asked = {r[0] for r in rows or ()}
    if not asked:
        return {}
    judged = Conversation.objects.filter(run=run, verdict_present__isnull=False)
    low, high = min(asked), max(asked)
    # The rated conversations by their id range when they fill much of it (a panel over the
    # whole run: no list of tens of thousands of ids to bind and send), else by their ids.
    if len(asked) * 4 >= high - low + 1:
        judged = judged.filter(pk__range=(low, high))
    else:
        judged = judged.filter(pk__in=asked)
    return {
        pk: (verdict, f"{version}:{base}")
        for pk, verdict, version, base in judged.values_list(
            "pk", "verdict_present", "scenario__metric_version_id", "scenario__base_index"
        ).order_by("pk")
        if pk in asked
    }


def expert_agreement(
    run: EvaluationRun,
    rows: list[VerdictRow] | None,
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
    judged: dict[int, tuple] | None = None,
) -> dict[str, Any]:
    """Expert verdicts against the judge's (majority) verdict, every figure an estimate.

    Per assessment: shares of expert ratings that agree / disagree with the judge / are unsure.
    Per conversation: the experts' majority (ties and all-unsure dropped, and counted as
    excluded) against the judge, as percent agreement and Cohen's kappa. Every interval
    resamples base scenarios (a metric's situation, its teen and adult variants and every
    model's conversation of it together): ratings of one conversation, and conversations of
    one situation, are not independent. ``judged``: `rated_verdicts` of the rows, if read.
    """
    if not rows:
        return {
            "available": False,
            "reason": gettext_noop("No expert ratings of judge verdicts yet."),
        }
    if judged is None:
        judged = rated_verdicts(run, rows)
    verdicts = {pk: verdict for pk, (verdict, _) in judged.items()}
    situation = {pk: where for pk, (_, where) in judged.items()}
    rows = [r for r in rows if r[0] in verdicts]
    if not rows:
        return {
            "available": False,
            "reason": gettext_noop("No expert ratings of judged conversations yet."),
        }
    options = {"n_resamples": n_resamples, "seed": seed}
    outcome = [
        "unsure" if v is None else ("agreed" if v == verdicts[c] else "disagreed")
        for c, _, v in rows
    ]
    shares = statistics.share_estimates(
        outcome,
        ("agreed", "disagreed", "unsure"),
        np.array([situation[c] for c, _, _ in rows]),
        over="base scenarios",
        **options,
    )
    by_conversation: dict[int, list[bool]] = {}
    for c, _, v in rows:
        if v is not None:
            by_conversation.setdefault(c, []).append(v)
    majority: dict[int, bool] = {}
    for c, votes in by_conversation.items():
        yes = sum(votes)
        if yes * 2 != len(votes):
            majority[c] = yes * 2 > len(votes)
    rated = {c for c, _, _ in rows}
    excluded = [
        Exclusion(gettext_noop("experts tied"), len(by_conversation) - len(majority)),
        Exclusion(gettext_noop("all experts unsure"), len(rated) - len(by_conversation)),
    ]
    ids = sorted(majority)
    expert = np.array([majority[c] for c in ids], dtype=np.int64)
    judge = np.array([verdicts[c] for c in ids], dtype=np.int64)
    bases = np.array([situation[c] for c in ids])
    # Both from one drawing of the base scenarios (each as its own bootstrap would give it).
    agreement, kappa = statistics.agreement_estimates(
        expert, judge, bases, over="base scenarios", excluded=excluded, **options
    )
    return {
        "available": True,
        "n_ratings": len(rows),
        "n_raters": len({r for _, r, _ in rows}),
        "n_conversations": len(ids),
        "shares": {name: e.as_dict() for name, e in shares.items()},
        "percent_agreement": agreement.as_dict(),
        "cohen_kappa": kappa.as_dict(),
    }


def anchor_consistency(run: EvaluationRun, **options: Any) -> dict[str, Any]:
    """Anchor disagreement across replicates, from measured coverage (see `anchors`)."""
    return measured(run, **options)
