"""Public rubric results: per release (its official rubric run), the items behind a figure,
one graded reply, and users' against clinicians' priorities."""

from django.http import Http404
from django.urls import reverse
from django.utils.translation import gettext, pgettext
from django.views.generic import TemplateView

from core.ids import identifier_parse
from core.pagecache import PublishedPageCacheMixin
from rubrics.dimensions import dimension_labels
from rubrics.models import Acuity, Population

from ..language_pages import rubric_language_choice
from ..plain_rubrics import priorities_lead, rubric_items_lead, rubric_lead, rubric_reply_lead
from ..rubric_priorities import rubric_priorities
from ..rubrics import (
    SECTIONS,
    WHAT_THEY_ARE,
    WHAT_THEY_ARE_NOT,
    public_rubric_response,
    public_rubric_responses,
    public_rubric_run,
    public_rubric_runs,
    rubric_response_criteria,
    rubric_results,
    rubric_run_languages,
)
from ..selectors import run_is_synthetic, run_uses_offline_model


class RubricRunMixin(PublishedPageCacheMixin):
    """Resolves ``?run=`` to a public rubric run; anything else is a 404."""

    page_cache_params: tuple[str, ...] = ("run",)

    def get_run(self):
        asked = self.request.GET.get("run", "")
        run = public_rubric_run(asked)
        if run is None and asked:
            raise Http404("No published rubric results for this run.")
        return run

    def run_context(self, run) -> dict:
        if run is None:
            return {"run": None}
        return {
            "run": run,
            "release": run.release,
            "offline": run_uses_offline_model(run),
            "synthetic": run_is_synthetic(run),
            "rubric_runs": [r for r in public_rubric_runs()[:20] if r.pk != run.pk],
            "what_they_are": WHAT_THEY_ARE,
            "what_they_are_not": WHAT_THEY_ARE_NOT,
        }


class RubricResultsView(RubricRunMixin, TemplateView):
    """Per model: the overall score and, beneath it, every dimension, acuity and population."""

    template_name = "results/rubrics/results.html"
    page_cache_params = ("run", "lang")

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        run = self.get_run()
        context.update(self.run_context(run))
        if run is not None:
            lang = rubric_language_choice(rubric_run_languages(run), self.request.GET.get("lang"))
            results = rubric_results(
                run, items_url=reverse("results:rubric-items"), language=lang.summary_language
            )
            context.update(
                lang_choice=lang,
                lang_links=lang.links({"run": str(run.pk)}),
            )
            context.update(
                results=results,
                lead=rubric_lead(results.targets),
                sections=[(key, label, results.sections[key]) for key, label in SECTIONS],
            )
        return context


class RubricItemsView(RubricRunMixin, TemplateView):
    page_cache_params = ("run", "model", "dimension", "acuity", "population")
    """The rubric replies behind one figure: a model, and a dimension, acuity or population."""

    template_name = "results/rubrics/items.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        run = self.get_run()
        if run is None:
            raise Http404("No published rubric results yet.")
        context.update(self.run_context(run))
        params = self.request.GET
        model = identifier_parse(params.get("model"), name="model") or ""
        dimension = params.get("dimension", "")
        acuity = params.get("acuity", "")
        population = params.get("population", "")
        labels = dimension_labels()
        if (
            (dimension and dimension not in labels)
            or (acuity and acuity not in Acuity.values)
            or (population and population not in Population.values)
        ):
            raise Http404("No such figure.")
        rows = public_rubric_responses(
            run, target=model, dimension=dimension, acuity=acuity, population=population
        )
        filters = []
        if model and rows:
            filters.append((gettext("Model"), rows[0].response.target.name))
        if dimension:
            filters.append((gettext("Behaviour dimension"), labels[dimension]))
        if acuity:
            filters.append((pgettext("rubric item", "Acuity"), Acuity(acuity).label))
        if population:
            filters.append((pgettext("rubric item", "Population"), Population(population).label))
        context.update(
            rows=rows,
            filters=filters,
            dimension=dimension,
            scored=sum(1 for row in rows if row.score is not None),
        )
        context["lead"] = rubric_items_lead(len(rows), context["scored"])
        return context


class RubricResponseView(PublishedPageCacheMixin, TemplateView):
    """One graded reply: the conversation, the reply, every criterion and why it counted."""

    template_name = "results/rubrics/response.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        response = public_rubric_response(self.kwargs["pk"])
        if response is None:
            raise Http404("No such published rubric reply.")
        rows = rubric_response_criteria(response)
        context.update(
            response=response,
            item=response.item,
            prefix=response.item.messages[:-1],
            final=response.item.messages[-1] if response.item.messages else None,
            criteria=rows,
            counted_points=sum(r.criterion.points for r in rows if r.counted and r.grade),
            reachable=sum(r.criterion.points for r in rows if r.counted and r.criterion.points > 0),
            earned=sum(r.criterion.points for r in rows if r.counted and r.grade and r.grade.met),
            run=response.run,
            release=response.run.release,
            offline=response.is_offline,
            demo_material=bool((response.item.metadata or {}).get("demo_material")),
            lead=rubric_reply_lead(response.target.name, rows),
        )
        return context


class RubricPrioritiesView(RubricRunMixin, TemplateView):
    """What users weight against what clinicians weight, for a release's rubric run."""

    template_name = "results/rubrics/priorities.html"
    page_cache_params = ("run", "lang")

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        run = self.get_run()
        context.update(self.run_context(run))
        if run is not None:
            lang = rubric_language_choice(rubric_run_languages(run), self.request.GET.get("lang"))
            context.update(lang_choice=lang, lang_links=lang.links({"run": str(run.pk)}))
            priorities = rubric_priorities(run, lang.summary_language)
            context.update(priorities)
            context["lead"] = priorities_lead(priorities["users"], priorities["clinicians"])
        return context
