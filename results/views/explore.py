from django.views.generic import TemplateView

from core.ids import identifier_parse

from ..charts import band_edges, sunburst
from ..language_pages import language_choice, language_gap_panels
from ..plain import explore_lead
from ..public import AGES, POLARITIES, explore
from ..selectors import run_targets
from ..services.judge_trust import low_trust_metrics, target_self_preference
from ..wheel import FAILING_BELOW, PASSING_FROM, metric_counts, wheel_key
from .common import PublicRunMixin


def _pick(value: str, allowed: tuple[str, ...]) -> str:
    return value if value in allowed else allowed[0]


class ExploreView(PublicRunMixin, TemplateView):
    """The wheel: areas inside, subareas outside, one model or two side by side."""

    template_name = "results/explore.html"
    page_cache_params = ("run", "model", "compare", "age", "polarity", "subarea", "lang")

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        run = self.get_run()
        context.update(self.run_context(run))
        if run is None:
            return context
        params = self.request.GET
        targets = list(run_targets(run))
        by_id = {t.pk: t for t in targets}
        model = identifier_parse(params.get("model"), name="model")
        chosen = [by_id.get(model) or (targets[0] if targets else None)]
        other = by_id.get(identifier_parse(params.get("compare"), name="compare"))
        if other is not None and other != chosen[0]:
            chosen.append(other)
        chosen = [t for t in chosen if t is not None]
        age = _pick(params.get("age", ""), AGES)
        polarity = _pick(params.get("polarity", ""), POLARITIES)
        lang = language_choice(run, params.get("lang"))
        base = {"run": str(run.pk), "age": age, "polarity": polarity}
        if lang.reader_lang:
            base["lang"] = lang.reader_lang
        if chosen:
            base["model"] = str(chosen[0].pk)
        if len(chosen) > 1:
            base["compare"] = str(chosen[1].pk)
        data = explore(
            run=run,
            targets=chosen,
            age=age,
            polarity=polarity,
            subarea_slug=params.get("subarea", ""),
            base_query=base,
            language=lang.summary_language,
        )
        selected = data.subarea.slug if data.subarea else ""
        counts = metric_counts(
            run=run,
            target_ids=[t.pk for t in chosen],
            age=age,
            polarity=polarity,
            language=lang.summary_language,
        )
        if data.wheels:
            first = data.wheels[0]
            context["lead"] = explore_lead(
                first.target.name, polarity, [(n.label, n.estimate) for n in first.nodes]
            )
        context.update(
            targets=targets,
            chosen=chosen,
            age=age,
            reader_age="" if age == "all" else age,  # carried by the page's links
            reader_lang=lang.reader_lang,
            lang_choice=lang,
            lang_links=lang.links({**base, "subarea": params.get("subarea", "")}),
            language_gaps=language_gap_panels(run) if lang.switchable else [],
            polarity=polarity,
            ages=AGES,
            polarities=POLARITIES,
            data=data,
            wheels=[
                (
                    w.target,
                    sunburst(w.nodes, selected=selected),
                    wheel_key(data, i, w.target.pk, counts),
                )
                for i, w in enumerate(data.wheels)
            ],
            passing_from=PASSING_FROM,
            failing_below=FAILING_BELOW,
            legend=band_edges(),
            base=base,
            trust_low_metrics=low_trust_metrics(run),
            self_preference_notes=[
                (t, pref) for t in chosen if (pref := target_self_preference(run, t))
            ],
        )
        return context
