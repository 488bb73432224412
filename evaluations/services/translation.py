"""Machine-translated scenarios and their review by someone who reads the language.

A machine translation can change what a scenario tests (a softened risk, a lost idiom), so a
translated scenario stays out of runs (`ScenarioQuerySet.runnable`) until an expert reviewer
who has declared they read its language has read it.
"""

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from core.exceptions import ApplicationError
from core.roles import Role, user_has_role
from core.services import reader_language_declare, user_reads_language

from ..models import Scenario, TranslationProvenance


@transaction.atomic
def scenario_translation_review(
    *, scenario: Scenario, reviewer: User, declare_reads_language: bool = False
) -> Scenario:
    """Mark a machine-translated scenario as reviewed by `reviewer`, who must read its language.

    `declare_reads_language` records the reviewer's declaration that they read it (the
    review form's checkbox) before the check.
    """
    scenario = Scenario.objects.select_for_update().get(pk=scenario.pk)
    if not user_has_role(reviewer, Role.EXPERT_REVIEWER):
        raise ApplicationError(_("Only an expert reviewer can review a scenario's translation."))
    if scenario.translation_provenance == TranslationProvenance.NATIVE:
        raise ApplicationError(_("This scenario was written natively: it has no translation."))
    if scenario.translation_provenance == TranslationProvenance.MACHINE_REVIEWED:
        raise ApplicationError(_("This scenario's translation has already been reviewed."))
    if declare_reads_language:
        reader_language_declare(user=reviewer, language=scenario.language)
    if not user_reads_language(user=reviewer, language=scenario.language):
        raise ApplicationError(
            _(
                "Reviewing this translation needs a reader of %(language)s: declare that you "
                "read it, or leave the review to someone who does."
            )
            % {"language": scenario.language}
        )
    scenario.translation_provenance = TranslationProvenance.MACHINE_REVIEWED
    scenario.translation_reviewed_by = reviewer
    scenario.translation_reviewed_at = timezone.now()
    scenario.save(
        update_fields=[
            "translation_provenance",
            "translation_reviewed_by",
            "translation_reviewed_at",
            "updated_at",
        ]
    )
    return scenario
