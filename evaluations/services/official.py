"""Which runs are public: a maintainer designates official runs of published releases, and may
mark one of them the release's headline run (the one public pages show by default)."""

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from core import events
from core.exceptions import ApplicationError
from evaluations.events import RunDesignated
from evaluations.models import EvaluationRun, RunStatus, SwapStudy
from evaluations.selectors import run_configuration_ids
from llm.services import configurations_publish


def _locked(run: EvaluationRun) -> EvaluationRun:
    # Lock the run row only: the release join is nullable (PostgreSQL refuses to lock it).
    return (
        EvaluationRun.objects.select_for_update(of=("self",))
        .select_related("release")
        .get(pk=run.pk)
    )


@transaction.atomic
def run_set_official(
    *, run: EvaluationRun, official: bool, changed_by: AbstractBaseUser | None
) -> EvaluationRun:
    """Make `run` public (or withdraw it), recording who decided and when.

    Only a completed run of a published release can be official; several runs of one release
    may be (for instance two target groups), and public pages list each. Making it official
    freezes the names of every model it used; withdrawing it takes away its headline mark but
    leaves the names frozen (they were public, and may have been cited).
    """
    run = _locked(run)
    if official:
        if run.status != RunStatus.COMPLETED:
            raise ApplicationError(_("Only a completed run can be made official."))
        if run.release is None or not run.release.is_published:
            raise ApplicationError(_("Only a run of a published release can be made official."))
        if SwapStudy.objects.filter(swap_run=run).exists():
            raise ApplicationError(
                _(
                    "This run re-runs a sample for a swap study: its figures are published with "
                    "its base run's, never as a release's results."
                )
            )
        # Published is immutable: the names the public pages now show may not change later.
        configurations_publish(configuration_ids=run_configuration_ids(run), run_id=run.pk)
    run.is_official = official
    if not official:
        run.is_headline = False
    run.official_changed_by = changed_by
    run.official_changed_at = timezone.now()
    run.save(
        update_fields=["is_official", "is_headline", "official_changed_by", "official_changed_at"]
    )
    events.publish(RunDesignated(run_id=run.pk))
    return run


@transaction.atomic
def run_set_headline(
    *, run: EvaluationRun, headline: bool, changed_by: AbstractBaseUser | None
) -> EvaluationRun:
    """Mark `run` as its release's headline run (unmarking any other), or remove the mark.

    Only an official run can be the headline. The change is recorded like an official
    designation (who and when), which also refreshes the cached public pages.
    """
    run = _locked(run)
    if headline and not run.is_official:
        raise ApplicationError(_("Make the run official before marking it as the headline run."))
    now = timezone.now()
    if headline:
        EvaluationRun.objects.filter(release_id=run.release_id, is_headline=True).exclude(
            pk=run.pk
        ).update(is_headline=False, official_changed_by=changed_by, official_changed_at=now)
    run.is_headline = headline
    run.official_changed_by = changed_by
    run.official_changed_at = now
    run.save(update_fields=["is_headline", "official_changed_by", "official_changed_at"])
    events.publish(RunDesignated(run_id=run.pk))
    return run
