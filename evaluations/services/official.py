"""Which runs are public: a maintainer designates official runs of published releases."""

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from core.exceptions import ApplicationError
from evaluations.models import EvaluationRun, RunStatus


@transaction.atomic
def run_set_official(
    *, run: EvaluationRun, official: bool, changed_by: AbstractBaseUser | None
) -> EvaluationRun:
    """Make `run` public (or withdraw it), recording who decided and when.

    Only a completed run of a published release can be official; several runs of one release
    may be (for instance two target groups), and public pages list each.
    """
    # Lock the run row only: the release join is nullable (PostgreSQL refuses to lock it).
    run = (
        EvaluationRun.objects.select_for_update(of=("self",))
        .select_related("release")
        .get(pk=run.pk)
    )
    if official:
        if run.status != RunStatus.COMPLETED:
            raise ApplicationError("Only a completed run can be made official.")
        if run.release is None or not run.release.is_published:
            raise ApplicationError("Only a run of a published release can be made official.")
    run.is_official = official
    run.official_changed_by = changed_by
    run.official_changed_at = timezone.now()
    run.save(update_fields=["is_official", "official_changed_by", "official_changed_at"])
    return run
