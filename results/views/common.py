"""What every public results page shares: the public run it shows, and that run's labels."""

from __future__ import annotations

from django.http import Http404

from core.pagecache import PublishedPageCacheMixin
from evaluations.models import EvaluationRun

from ..selectors import public_run, public_runs, run_is_synthetic, run_uses_offline_model


class PublicRunMixin(PublishedPageCacheMixin):
    """Resolves ``?run=`` to a public (official) run; anything else is a 404. Served from the
    page cache to signed-out readers (`core.pagecache`)."""

    request = None  # set by the view
    page_cache_params: tuple[str, ...] = ("run",)

    def get_run(self) -> EvaluationRun | None:
        asked = self.request.GET.get("run", "")
        run = public_run(asked)
        if run is None and asked:
            raise Http404("No published results for this run.")
        return run

    def run_context(self, run: EvaluationRun | None) -> dict:
        if run is None:
            return {"run": None}
        return {
            "run": run,
            "release": run.release,
            "offline": run_uses_offline_model(run),
            "synthetic": run_is_synthetic(run),
            "other_runs": [r for r in public_runs()[:20] if r.pk != run.pk],
        }
