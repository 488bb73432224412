"""Writing metrics: creation, new versions and validation status changes."""

from collections.abc import Iterable
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import F
from django.utils.text import slugify
from django.utils.translation import gettext as _

from core.exceptions import ApplicationError
from core.languages import DEFAULT_LANGUAGE, language_tag_normalize

from ..models import (
    AgeContexts,
    Benchmark,
    KeyCounter,
    LabelCategory,
    Metric,
    MetricStatusChange,
    MetricVersion,
    Polarity,
    SourceKind,
    Subarea,
    ValidationStatus,
)

METRIC_KEY_PREFIX = "IB-M-"

# Which validation statuses a metric may move to from each status. Retired metrics can come
# back for review (a retirement can be a mistake) but never straight to validated.
STATUS_TRANSITIONS: dict[str, frozenset[str]] = {
    ValidationStatus.DRAFT: frozenset({ValidationStatus.UNDER_REVIEW, ValidationStatus.RETIRED}),
    ValidationStatus.UNDER_REVIEW: frozenset(
        {
            ValidationStatus.DRAFT,
            ValidationStatus.VALIDATED,
            ValidationStatus.CONTESTED,
            ValidationStatus.RETIRED,
        }
    ),
    ValidationStatus.VALIDATED: frozenset(
        {ValidationStatus.UNDER_REVIEW, ValidationStatus.CONTESTED, ValidationStatus.RETIRED}
    ),
    ValidationStatus.CONTESTED: frozenset(
        {ValidationStatus.UNDER_REVIEW, ValidationStatus.VALIDATED, ValidationStatus.RETIRED}
    ),
    ValidationStatus.RETIRED: frozenset({ValidationStatus.UNDER_REVIEW}),
}

# Fields `metric_version_create` accepts; everything not passed is copied from the current one.
VERSION_FIELDS = (
    "name",
    "criterion",
    "polarity",
    "subarea_slugs",
    "label_category_slug",
    "rubric_notes",
    "failure_condition",
    "age_contexts",
    "language",
)


def _metric_key_next() -> str:
    """Take the next key from a counter row, so keys of deleted metrics are never handed out."""
    KeyCounter.objects.get_or_create(name="metric")
    KeyCounter.objects.filter(name="metric").update(last_value=F("last_value") + 1)
    value = KeyCounter.objects.get(name="metric").last_value
    return f"{METRIC_KEY_PREFIX}{value:05d}"


def _choice(value: str, choices: type, label: str) -> str:
    value = (value or "").strip().lower()
    if value not in choices.values:
        allowed = ", ".join(choices.values)
        raise ApplicationError(
            _('Unknown %(label)s "%(value)s": use one of %(allowed)s.')
            % {"label": label, "value": value, "allowed": allowed}
        )
    return value


def _required_text(value: str, label: str, *, max_length: int | None = None) -> str:
    value = (value or "").strip()
    if not value:
        raise ApplicationError(_("The %(label)s is required.") % {"label": label})
    if max_length and len(value) > max_length:
        raise ApplicationError(
            _("The %(label)s is too long (%(count)s > %(max_length)s characters).")
            % {"label": label, "count": len(value), "max_length": max_length}
        )
    return value


def subareas_from_slugs(slugs: Iterable[str]) -> list[Subarea]:
    wanted = [slug.strip() for slug in slugs if slug and slug.strip()]
    if not wanted:
        raise ApplicationError(_("Choose at least one subarea for the metric."))
    found = {subarea.slug: subarea for subarea in Subarea.objects.filter(slug__in=wanted)}
    unknown = [slug for slug in wanted if slug not in found]
    if unknown:
        raise ApplicationError(
            _("Unknown subarea %(items)s; see the taxonomy page for the valid slugs.")
            % {"items": ", ".join(repr(s) for s in unknown)}
        )
    return [found[slug] for slug in dict.fromkeys(wanted)]


def _language(raw: str) -> str:
    try:
        return language_tag_normalize(raw)
    except ValidationError as error:
        raise ApplicationError(error.messages[0]) from error


def label_category_from_slug(slug: str) -> LabelCategory:
    category = LabelCategory.objects.filter(slug=(slug or "").strip()).first()
    if category is None:
        valid = ", ".join(LabelCategory.objects.values_list("slug", flat=True))
        raise ApplicationError(
            _('Unknown label category "%(slug)s": use one of %(valid)s.')
            % {"slug": slug, "valid": valid}
        )
    return category


def _version_write(
    *,
    metric: Metric,
    number: int,
    content: dict[str, Any],
    subareas: list[Subarea],
    created_by: AbstractBaseUser | None,
    change_note: str,
) -> MetricVersion:
    version = MetricVersion.objects.create(
        metric=metric, number=number, created_by=created_by, change_note=change_note, **content
    )
    version.subareas.set(subareas)
    Metric.objects.filter(pk=metric.pk).update(current_version=version)
    metric.current_version = version
    return version


@transaction.atomic
def metric_create(
    *,
    name: str,
    criterion: str,
    polarity: str,
    subarea_slugs: Iterable[str],
    label_category_slug: str,
    rubric_notes: str = "",
    failure_condition: str = "",
    age_contexts: str = AgeContexts.BOTH,
    source_kind: str,
    contributor: AbstractBaseUser | None = None,
    credit_name: str = "",
    benchmark: Benchmark | None = None,
    source_reference: str = "",
    created_by: AbstractBaseUser | None,
    status: str = ValidationStatus.UNDER_REVIEW,
    change_note: str = "First version.",
    unmapped_allowed: bool = False,
    source_weight: float | None = None,
    language: str = DEFAULT_LANGUAGE,
) -> Metric:
    """Create a metric with a fresh key and its version 1.

    `unmapped_allowed` (imports only) accepts a blank label category and no subareas: the
    metric is then listed as needing mapping and kept out of releases until a researcher
    gives it a new version that maps it.
    """
    source_kind = _choice(source_kind, SourceKind, "source kind")
    status = _choice(status, ValidationStatus, "validation status")
    if source_kind == SourceKind.BENCHMARK and benchmark is None:
        raise ApplicationError(_("A metric imported from a benchmark needs that benchmark."))
    content = {
        "name": _required_text(name, "metric name", max_length=200),
        "criterion": _required_text(criterion, "criterion"),
        "polarity": _choice(polarity, Polarity, "polarity"),
        "label_category": (
            None
            if unmapped_allowed and not (label_category_slug or "").strip()
            else label_category_from_slug(label_category_slug)
        ),
        "rubric_notes": (rubric_notes or "").strip(),
        "failure_condition": (failure_condition or "").strip(),
        "age_contexts": _choice(age_contexts or AgeContexts.BOTH, AgeContexts, "age context"),
        "language": _language(language),
    }
    subarea_slugs = list(subarea_slugs)
    subareas = [] if unmapped_allowed and not subarea_slugs else subareas_from_slugs(subarea_slugs)
    metric = Metric.objects.create(
        key=_metric_key_next(),
        validation_status=status,
        source_kind=source_kind,
        contributor=contributor,
        credit_name=(credit_name or "").strip(),
        benchmark=benchmark,
        source_reference=(source_reference or "").strip(),
        source_weight=source_weight,
    )
    _version_write(
        metric=metric,
        number=1,
        content=content,
        subareas=subareas,
        created_by=created_by,
        change_note=change_note,
    )
    MetricStatusChange.objects.create(
        metric=metric, from_status="", to_status=status, changed_by=created_by, reason="Created."
    )
    return metric


@transaction.atomic
def metric_version_create(
    *,
    metric: Metric,
    created_by: AbstractBaseUser | None,
    change_note: str,
    **changed_fields: Any,
) -> MetricVersion:
    """Add a version that copies the current one and applies `changed_fields`.

    Accepted fields: name, criterion, polarity, subarea_slugs, label_category_slug,
    rubric_notes, failure_condition, age_contexts, language.
    """
    unknown = sorted(set(changed_fields) - set(VERSION_FIELDS))
    if unknown:
        raise ApplicationError(
            _("Cannot change %(fields)s; a version holds %(version_fields)s.")
            % {"fields": ", ".join(unknown), "version_fields": ", ".join(VERSION_FIELDS)}
        )
    change_note = _required_text(change_note, "change note (what changed and why)")
    # Lock the metric so two editors cannot both create "version 3".
    metric = Metric.objects.select_for_update().get(pk=metric.pk)
    if metric.validation_status == ValidationStatus.RETIRED:
        raise ApplicationError(
            _("%(metric_key)s is retired; move it back to under review before changing it.")
            % {"metric_key": metric.key}
        )
    current = metric.versions.order_by("-number").first()
    content = {
        "name": current.name,
        "criterion": current.criterion,
        "polarity": current.polarity,
        "label_category": current.label_category,
        "rubric_notes": current.rubric_notes,
        "failure_condition": current.failure_condition,
        "age_contexts": current.age_contexts,
        "language": current.language,
    }
    subareas = list(current.subareas.all())
    if "name" in changed_fields:
        content["name"] = _required_text(changed_fields["name"], "metric name", max_length=200)
    if "criterion" in changed_fields:
        content["criterion"] = _required_text(changed_fields["criterion"], "criterion")
    if "polarity" in changed_fields:
        content["polarity"] = _choice(changed_fields["polarity"], Polarity, "polarity")
    if "label_category_slug" in changed_fields:
        content["label_category"] = label_category_from_slug(changed_fields["label_category_slug"])
    for field in ("rubric_notes", "failure_condition"):
        if field in changed_fields:
            content[field] = (changed_fields[field] or "").strip()
    if "age_contexts" in changed_fields:
        content["age_contexts"] = _choice(
            changed_fields["age_contexts"], AgeContexts, "age context"
        )
    if "language" in changed_fields:
        content["language"] = _language(changed_fields["language"])
    if "subarea_slugs" in changed_fields:
        subareas = subareas_from_slugs(changed_fields["subarea_slugs"])

    unchanged = all(getattr(current, field) == value for field, value in content.items()) and {
        s.pk for s in subareas
    } == {s.pk for s in current.subareas.all()}
    if unchanged:
        raise ApplicationError(
            _("Nothing changed compared with version %(current_number)s of %(metric_key)s.")
            % {"current_number": current.number, "metric_key": metric.key}
        )
    return _version_write(
        metric=metric,
        number=current.number + 1,
        content=content,
        subareas=subareas,
        created_by=created_by,
        change_note=change_note,
    )


@transaction.atomic
def metric_status_change(
    *,
    metric: Metric,
    to_status: str,
    changed_by: AbstractBaseUser | None,
    reason: str = "",
) -> Metric:
    """Move a metric along its validation workflow and record who did it, when and why."""
    to_status = _choice(to_status, ValidationStatus, "validation status")
    metric = Metric.objects.select_for_update().get(pk=metric.pk)
    from_status = metric.validation_status
    if to_status == from_status:
        raise ApplicationError(
            _("%(metric_key)s is already %(status)s.")
            % {"metric_key": metric.key, "status": metric.get_validation_status_display()}
        )
    if to_status not in STATUS_TRANSITIONS[from_status]:
        allowed = ", ".join(sorted(STATUS_TRANSITIONS[from_status]))
        raise ApplicationError(
            _(
                "%(metric_key)s cannot go from %(from_status)s to %(to_status)s; "
                "from %(from_status)s it can go to: %(allowed)s."
            )
            % {
                "metric_key": metric.key,
                "from_status": from_status,
                "to_status": to_status,
                "allowed": allowed,
            }
        )
    reason = (reason or "").strip()
    if to_status == ValidationStatus.RETIRED and not reason:
        raise ApplicationError(_("Say why the metric is retired; the reason is shown publicly."))
    metric.validation_status = to_status
    metric.save(update_fields=["validation_status", "updated_at"])
    MetricStatusChange.objects.create(
        metric=metric,
        from_status=from_status,
        to_status=to_status,
        changed_by=changed_by,
        reason=reason,
    )
    return metric


@transaction.atomic
def benchmark_get_or_create(
    *,
    slug: str,
    name: str = "",
    citation: str = "",
    url: str = "",
    description: str = "",
    license: str = "",  # noqa: A002 - the field's name
) -> Benchmark:
    """The benchmark with `slug`; created with the given details if it does not exist yet."""
    clean_slug = slugify(slug or "")
    if not clean_slug:
        raise ApplicationError(
            _("Give the benchmark a short identifier (letters, digits, dashes).")
        )
    benchmark, _created = Benchmark.objects.get_or_create(
        slug=clean_slug,
        defaults={
            "name": (name or "").strip() or clean_slug,
            "citation": citation or "",
            "url": url or "",
            "description": description or "",
            "license": license or "",
        },
    )
    return benchmark
