"""Writing a metric version's texts in other languages, and reviewing machine translations.

The rules (see `metrics_registry.models.texts`): a native text's writer must read its language;
a machine translation is shown publicly only once an expert reviewer who reads the language,
and did not write it, has reviewed it; a reviewed text is frozen, and correcting it starts by
reopening it (back to "machine-translated, not reviewed", off the public pages).
"""

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from core.exceptions import ApplicationError
from core.languages import (
    TranslationProvenance,
    language_display_name,
    language_tag_normalize,
)
from core.roles import Role, user_has_role
from core.services import ReviewRefusals, translation_review_check, user_reads_language
from core.validators import control_character_message, display_spoofing_message, text_max_length

from ..models import MetricVersion, MetricVersionText

# Who writes a metric's texts: those who curate metrics, and the experts who read them.
TEXT_WRITER_ROLES = (Role.RESEARCHER, Role.MAINTAINER, Role.EXPERT_REVIEWER)
# Provenances a writer may give a text; a review is the only way to "machine_reviewed".
WRITTEN_PROVENANCES = (TranslationProvenance.NATIVE, TranslationProvenance.MACHINE)
NAME_MAX_LENGTH = 200


def _checked(value: str, *, label: str, required: bool, one_line: bool = False) -> str:
    """`value` trimmed, or ApplicationError saying what is wrong with it (the same checks the
    forms make at the edge, for callers that are not forms)."""
    value = (value or "").strip()
    if required and not value:
        raise ApplicationError(_("%(field)s: this field is required.") % {"field": label})
    if problem := control_character_message(value):
        raise ApplicationError(_("%(field)s: %(problem)s") % {"field": label, "problem": problem})
    limit = NAME_MAX_LENGTH if one_line else text_max_length()
    if len(value) > limit:
        raise ApplicationError(
            _("%(field)s: %(length)d characters long; at most %(limit)d are accepted.")
            % {"field": label, "length": len(value), "limit": limit}
        )
    if one_line:
        if "\n" in value or "\r" in value:
            raise ApplicationError(
                _("%(field)s: must be a single line; remove the line break.") % {"field": label}
            )
        if problem := display_spoofing_message(value):
            raise ApplicationError(
                _("%(field)s: %(problem)s") % {"field": label, "problem": problem}
            )
    return value


def _text_language(version: MetricVersion, raw: str) -> str:
    try:
        language = language_tag_normalize(raw)
    except ValidationError as error:
        raise ApplicationError(error.messages[0]) from error
    if language == version.language:
        raise ApplicationError(
            _(
                "This version is itself written in %(language)s: its own name and criterion are "
                "the %(language)s text. Choose another language."
            )
            % {"language": language_display_name(language)}
        )
    return language


# Whole sentences per action, so each translates as a sentence.
READER_NEEDED = {
    "write": gettext_lazy(
        "Writing a text natively needs a reader of %(language)s: declare that you read it on "
        "your languages page, or mark the text as a machine translation."
    ),
    "reopen": gettext_lazy(
        "Reopening this translation needs a reader of %(language)s: declare that you read it "
        "on your languages page, or leave it to someone who does."
    ),
}


REVIEW_REFUSALS = ReviewRefusals(
    not_reviewer=gettext_lazy("Only an expert reviewer can review a metric's translation."),
    native=gettext_lazy("This text was written natively: it has no translation."),
    already_reviewed=gettext_lazy("This translation has already been reviewed."),
)


def _needs_reader(language: str, action: str) -> ApplicationError:
    return ApplicationError(
        str(READER_NEEDED[action]) % {"language": language_display_name(language)}
    )


@transaction.atomic
def metric_version_text_save(
    *,
    version: MetricVersion,
    language: str,
    name: str,
    criterion: str,
    failure_condition: str = "",
    provenance: str,
    writer: User,
) -> MetricVersionText:
    """Add the `language` text of `version`, or edit it if it exists and is not reviewed.

    `provenance` is "native" (the writer wrote it in the language, and must read it) or
    "machine" (a machine translation, shown publicly once a reader reviews it). An edit of a
    native text by someone who pastes a machine translation makes it "machine" again.
    """
    if not user_has_role(writer, *TEXT_WRITER_ROLES):
        raise ApplicationError(
            _("Only researchers, maintainers and expert reviewers write a metric's texts.")
        )
    language = _text_language(version, language)
    if provenance not in WRITTEN_PROVENANCES:
        raise ApplicationError(
            _("Say whether you wrote this text in the language or it is a machine translation.")
        )
    content = {
        "name": _checked(name, label=_("Name"), required=True, one_line=True),
        "criterion": _checked(criterion, label=_("Criterion"), required=True),
        "failure_condition": _checked(
            failure_condition, label=_("Failure condition"), required=False
        ),
    }
    if provenance == TranslationProvenance.NATIVE and not user_reads_language(
        user=writer, language=language
    ):
        raise _needs_reader(language, "write")
    text = (
        MetricVersionText.objects.select_for_update()
        .filter(metric_version=version, language=language)
        .first()
    )
    if text is None:
        try:
            with transaction.atomic():
                return MetricVersionText.objects.create(
                    metric_version=version,
                    language=language,
                    provenance=provenance,
                    written_by=writer,
                    **content,
                )
        except IntegrityError as error:  # written at the same moment by someone else
            raise ApplicationError(
                _("This version already has a %(language)s text: edit that one.")
                % {"language": language_display_name(language)}
            ) from error
    if text.is_frozen:
        raise ApplicationError(
            _(
                "The %(language)s text was reviewed and is frozen, so readers see what the "
                "reviewer checked. To correct it, reopen it first: it then leaves the public "
                "pages until it is reviewed again."
            )
            % {"language": language_display_name(language)}
        )
    for field, value in content.items():
        setattr(text, field, value)
    text.provenance = provenance
    text.written_by = writer
    text.save()
    return text


@transaction.atomic
def metric_version_text_review(*, text: MetricVersionText, reviewer: User) -> MetricVersionText:
    """Mark a machine translation reviewed by `reviewer`: an expert reviewer who reads its
    language and did not write it. From then on it is shown publicly, and frozen."""
    text = MetricVersionText.objects.select_for_update().get(pk=text.pk)
    translation_review_check(
        reviewer=reviewer,
        provenance=text.provenance,
        language=text.language,
        refusals=REVIEW_REFUSALS,
        written_by_id=text.written_by_id,
    )
    text.provenance = TranslationProvenance.MACHINE_REVIEWED
    text.reviewed_by = reviewer
    text.reviewed_at = timezone.now()
    text.save(update_fields=["provenance", "reviewed_by", "reviewed_at", "updated_at"])
    return text


@transaction.atomic
def metric_version_text_reopen(*, text: MetricVersionText, user: User) -> MetricVersionText:
    """Unfreeze a reviewed translation so it can be corrected: it becomes "machine-translated,
    not reviewed" again and leaves the public pages until a reader reviews it once more.
    Only a reader of the language may withdraw what another reader vouched for."""
    text = MetricVersionText.objects.select_for_update().get(pk=text.pk)
    if not user_has_role(user, *TEXT_WRITER_ROLES):
        raise ApplicationError(
            _("Only researchers, maintainers and expert reviewers write a metric's texts.")
        )
    if not text.is_frozen:
        raise ApplicationError(_("This text is not reviewed: edit it directly."))
    if not user_reads_language(user=user, language=text.language):
        raise _needs_reader(text.language, "reopen")
    text.provenance = TranslationProvenance.MACHINE
    text.reviewed_by = None
    text.reviewed_at = None
    text.save(update_fields=["provenance", "reviewed_by", "reviewed_at", "updated_at"])
    return text


__all__ = [
    "TEXT_WRITER_ROLES",
    "WRITTEN_PROVENANCES",
    "metric_version_text_reopen",
    "metric_version_text_review",
    "metric_version_text_save",
]
