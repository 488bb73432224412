"""What every public results page shares: the public run it shows, and that run's labels."""

from __future__ import annotations

from django.http import Http404

from core.pagecache import PublishedPageCacheMixin
from core.roles import Role, user_has_role
from evaluations.models import EvaluationRun

from ..language_pages import LanguageChoice, language_choice
from ..selectors import (
    headline_run_ids,
    public_run,
    public_runs,
    run_ids_with_target,
    run_is_synthetic,
    run_uses_offline_model,
    staff_run,
)

STAFF_ROLES = (Role.RESEARCHER, Role.MAINTAINER)


class PublicRunMixin(PublishedPageCacheMixin):
    """Resolves ``?run=`` to a public (official) run; anything else is a 404, except that
    maintainers and researchers may open any summarised run, marked "not public". Served from
    the page cache to signed-out readers (`core.pagecache`)."""

    request = None  # set by the view
    page_cache_params: tuple[str, ...] = ("run",)
    private = False

    def dispatch(self, request, *args, **kwargs):
        if self.is_staff_reader():
            # Staff may be shown a run visitors may not see: their answers are never shared,
            # not even the images that are otherwise cached for everyone.
            self.page_cache_anonymous_only = True
        return super().dispatch(request, *args, **kwargs)

    def is_staff_reader(self) -> bool:
        return user_has_role(self.request.user, *STAFF_ROLES)

    def get_run(self, *, with_analysis: bool = False) -> EvaluationRun | None:
        asked = self.request.GET.get("run", "")
        run = public_run(asked, with_analysis=with_analysis)
        if run is None and asked and self.is_staff_reader():
            run = staff_run(asked, with_analysis=with_analysis)
            self.private = run is not None
        if run is None and asked:
            raise Http404("No published results for this run.")
        return run

    def run_context(self, run: EvaluationRun | None, *, target_id: int | None = None) -> dict:
        """The run's labels and the other public runs a reader can switch to (those of the
        run's release first, each release's headline run named as such); with `target_id`,
        only runs in which that model was a target."""
        if run is None:
            return {"run": None}
        # One query for the listing and the headline marks (the first run of each release).
        runs = list(public_runs()[:200])
        heads = headline_run_ids(runs)
        if target_id is not None:
            with_target = set(run_ids_with_target(target_id))
            runs = [r for r in runs if r.pk in with_target]
        others = [r for r in runs if r.pk != run.pk][:20]
        return {
            "run": run,
            "release": run.release,
            "offline": run_uses_offline_model(run),
            "synthetic": run_is_synthetic(run),
            "private": self.private or not run.is_official,
            "is_headline": run.pk in heads,
            "headline_ids": heads,
            "release_runs": [r for r in others if r.release_id == run.release_id],
            "other_runs": [r for r in others if r.release_id != run.release_id],
        }


class LanguageSwitchMixin:
    """``?lang=`` on a page of one run: the reader's choice among the run's languages, read
    once per request, and the switch's context (as ``age_context`` is the population's)."""

    request = None  # set by the view
    _lang: LanguageChoice | None = None

    def lang(self, run) -> LanguageChoice:
        """The language asked for among the run's (one query, once per request)."""
        if getattr(self, "_lang", None) is None:
            self._lang = language_choice(run, self.request.GET.get("lang"))
        return self._lang

    def language_context(self, run) -> dict:
        """The language switch, as `age_context` is the population's."""
        lang = self.lang(run)
        return {
            "lang_choice": lang,
            "lang_links": lang.links(self.request.GET.dict()),
            "reader_lang": lang.reader_lang,
        }
