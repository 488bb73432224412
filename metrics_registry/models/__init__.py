"""Metrics, their taxonomy and the releases that publish them.

Every model and choice is importable from here (`from metrics_registry.models import Metric`).
"""

from .metrics import (
    AgeContexts,
    Metric,
    MetricQuerySet,
    MetricStatusChange,
    MetricVersion,
    SourceKind,
    ValidationStatus,
)
from .releases import (
    MAX_VERSION_PART,
    SEMVER_RE,
    Release,
    ReleaseChangelog,
    ReleaseItem,
    ReleaseQuerySet,
    ReleaseStatus,
    parse_semver,
    semver_validator,
)
from .taxonomy import Area, Benchmark, KeyCounter, LabelCategory, Polarity, Subarea
from .texts import PUBLIC_PROVENANCES, MetricVersionText, MetricVersionTextQuerySet

__all__ = [
    "MAX_VERSION_PART",
    "SEMVER_RE",
    "AgeContexts",
    "Area",
    "Benchmark",
    "KeyCounter",
    "LabelCategory",
    "Metric",
    "MetricQuerySet",
    "MetricStatusChange",
    "MetricVersion",
    "MetricVersionText",
    "MetricVersionTextQuerySet",
    "PUBLIC_PROVENANCES",
    "Polarity",
    "Release",
    "ReleaseChangelog",
    "ReleaseItem",
    "ReleaseQuerySet",
    "ReleaseStatus",
    "SourceKind",
    "Subarea",
    "ValidationStatus",
    "parse_semver",
    "semver_validator",
]
