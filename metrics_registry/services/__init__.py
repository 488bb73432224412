"""Registry services (writes). Import from here: `from metrics_registry.services import ...`."""

from .metrics import (
    STATUS_TRANSITIONS,
    benchmark_get_or_create,
    label_category_from_slug,
    metric_create,
    metric_status_change,
    metric_version_create,
    subareas_from_slugs,
)
from .releases import (
    ChangedMetric,
    Changelog,
    RemovedMetric,
    metric_version_changed_fields,
    release_add_versions,
    release_assemble_from_current,
    release_changelog,
    release_create,
    release_delete_draft,
    release_publish,
    release_remove_versions,
    release_update,
)

__all__ = [
    "STATUS_TRANSITIONS",
    "ChangedMetric",
    "Changelog",
    "RemovedMetric",
    "benchmark_get_or_create",
    "label_category_from_slug",
    "metric_create",
    "metric_status_change",
    "metric_version_changed_fields",
    "metric_version_create",
    "release_add_versions",
    "release_assemble_from_current",
    "release_changelog",
    "release_create",
    "release_delete_draft",
    "release_publish",
    "release_remove_versions",
    "release_update",
    "subareas_from_slugs",
]
