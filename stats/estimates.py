"""The one type every published figure travels in: a value with its interval, its n, and what
was left out.

Pure Python (no Django, no NumPy needed to read one), so statistics functions return it, pages
render it through one template tag (``{% estimate %}`` in ``results_tags``), JSON snapshots
store it (:meth:`Estimate.as_dict` / :meth:`Estimate.from_dict`) and the API serialises it.

A figure with too little data behind it is still an ``Estimate``: ``value`` is ``None`` and
``reason`` says why, so a page prints "not enough data (n = 1)" instead of a number.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

Unit = Literal["proportion", "difference", "coefficient", "score", "count"]

# Below this many items a figure is not shown as a number (it would mislead more than inform).
MIN_ITEMS = 2


@dataclass(frozen=True)
class Exclusion:
    """Items left out of a figure, and why ("target error", "not judged", ...)."""

    reason: str
    count: int

    def as_dict(self) -> dict[str, Any]:
        return {"reason": self.reason, "count": self.count}


def _finite(value: float | None) -> float | None:
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


@dataclass(frozen=True)
class Estimate:
    """A published figure.

    ``value`` is ``None`` when the data cannot support a number (``reason`` says why).
    ``low``/``high`` are ``None`` when a value exists but no interval could be drawn (for
    example fewer than two clusters); the figure is then shown with "no interval".
    ``n`` counts the items behind the value (conversations, ratings, rubric items ...),
    ``n_clusters`` the independent units resampled (base scenarios, rated items), ``excluded``
    what was left out and why.
    """

    value: float | None
    low: float | None = None
    high: float | None = None
    method: str = ""
    confidence: float = 0.95
    n: int = 0
    n_clusters: int | None = None
    excluded: tuple[Exclusion, ...] = field(default_factory=tuple)
    unit: Unit = "proportion"
    reason: str = ""
    # Bootstrap standard deviation of the value, where the method reports one (rubric scores).
    sd: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "value", _finite(self.value))
        object.__setattr__(self, "low", _finite(self.low))
        object.__setattr__(self, "high", _finite(self.high))
        object.__setattr__(self, "sd", _finite(self.sd))
        object.__setattr__(self, "excluded", tuple(self.excluded))

    # --- construction -------------------------------------------------------------------

    @classmethod
    def insufficient(
        cls,
        *,
        n: int = 0,
        reason: str = "not enough data",
        unit: Unit = "proportion",
        method: str = "",
        n_clusters: int | None = None,
        excluded: Iterable[Exclusion] = (),
    ) -> Estimate:
        return cls(
            value=None,
            n=n,
            n_clusters=n_clusters,
            unit=unit,
            method=method,
            reason=reason,
            excluded=tuple(excluded),
        )

    def with_exclusions(self, exclusions: Iterable[Exclusion]) -> Estimate:
        kept = tuple(e for e in exclusions if e.count)
        return replace(self, excluded=self.excluded + kept)

    # --- reading ------------------------------------------------------------------------

    @property
    def defined(self) -> bool:
        return self.value is not None

    @property
    def has_interval(self) -> bool:
        return self.low is not None and self.high is not None

    @property
    def n_excluded(self) -> int:
        return sum(e.count for e in self.excluded)

    @property
    def excludes_zero(self) -> bool:
        """True when the interval lies wholly on one side of zero (for differences)."""
        low, high = self.low, self.high
        return low is not None and high is not None and (low > 0 or high < 0)

    @property
    def width(self) -> float | None:
        low, high = self.low, self.high
        return high - low if low is not None and high is not None else None

    # --- storage ------------------------------------------------------------------------

    def as_dict(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "low": self.low,
            "high": self.high,
            "method": self.method,
            "confidence": self.confidence,
            "n": self.n,
            "n_clusters": self.n_clusters,
            "excluded": [e.as_dict() for e in self.excluded],
            "unit": self.unit,
            "reason": self.reason,
            "sd": self.sd,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Estimate:
        return cls(
            value=data.get("value"),
            low=data.get("low"),
            high=data.get("high"),
            method=data.get("method", ""),
            confidence=data.get("confidence", 0.95),
            n=int(data.get("n") or 0),
            n_clusters=data.get("n_clusters"),
            excluded=tuple(
                Exclusion(reason=e["reason"], count=int(e["count"]))
                for e in data.get("excluded", ())
            ),
            unit=data.get("unit", "proportion"),
            reason=data.get("reason", ""),
            sd=data.get("sd"),
        )


def is_estimate_dict(value: Any) -> bool:
    """True for a mapping written by :meth:`Estimate.as_dict` (JSON snapshots hold these)."""
    return isinstance(value, Mapping) and "value" in value and "n" in value and "unit" in value
