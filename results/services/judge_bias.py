"""Whether the judge agrees less with blind experts on one model than on the others.

The absolute badge ("judge validated") cannot see a judge that fails a share of one model's
true passes: its agreement there stays near 0.87, above the bar, while the ranking it feeds is
biased against that model. `stats.judge_bias.agreement_gaps` compares each model's agreement
with the others' on the same metrics; the refresh stores the result with the run-wide judge
trust (`judge_trust.JUDGE_TRUST`), and pages and the API read it from there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from django.utils.translation import gettext_lazy as _

from stats.estimates import Estimate
from stats.judge_bias import agreement_gaps

from .judge_trust_cells import BlindRows, verdicts

AGREES_LESS = "agrees_less"
NO_GAP_SHOWN = "no_gap_shown"
GAP_BADGES = {
    AGREES_LESS: _("judge agrees less for this model"),
    NO_GAP_SHOWN: _("no shown difference from the other models"),
}


@dataclass(frozen=True)
class ModelGap:
    """One model's comparison as pages and the API show it: the judge's agreement with
    experts on it, on the other models (on its metric mix), the difference, and the badge."""

    model: Estimate
    others: Estimate
    difference: Estimate
    badge: str
    synthetic: bool

    @property
    def agrees_less(self) -> bool:
        return self.badge == AGREES_LESS

    @property
    def label(self) -> str:
        return str(GAP_BADGES[self.badge])

    def as_api(self) -> dict[str, Any]:
        return {
            "badge": self.badge,
            "label": self.label,
            "agreement_on_model": self.model,
            "agreement_on_others": self.others,
            "difference": self.difference,
            "synthetic": self.synthetic,
        }

    def stored(self) -> dict[str, Any]:
        return {
            "model": self.model.as_dict(),
            "others": self.others.as_dict(),
            "difference": self.difference.as_dict(),
            "badge": self.badge,
            "synthetic": self.synthetic,
        }

    @classmethod
    def from_stored(cls, data: dict[str, Any]) -> ModelGap:
        return cls(
            Estimate.from_dict(data["model"]),
            Estimate.from_dict(data["others"]),
            Estimate.from_dict(data["difference"]),
            data["badge"],
            data["synthetic"],
        )


def target_gaps(rows: BlindRows, *, icc: float, synthetic: bool) -> list[list]:
    """Every rated target's comparison in its stored form, as ``[[target id, gap], ...]``
    (JSON has no integer keys); none with fewer than two targets to compare."""
    if len(np.unique(rows.target)) < 2:
        return []
    clusters = rows.version * (int(rows.base.max()) + 1) + rows.base
    gaps = agreement_gaps(
        rows.target.tolist(),
        rows.metric,
        verdicts(rows.judge),
        verdicts(rows.expert),
        clusters,
        icc=icc,
    )
    return [
        [
            int(target),
            ModelGap(
                gap.model,
                gap.others,
                gap.difference,
                AGREES_LESS if gap.agrees_less else NO_GAP_SHOWN,
                synthetic,
            ).stored(),
        ]
        for target, gap in sorted(gaps.items())
    ]


def read_gaps(stored: list[list] | None) -> dict[int, ModelGap]:
    return {int(target): ModelGap.from_stored(data) for target, data in stored or []}
