
from django.http import Http404
from django.views.generic import TemplateView

from ..audiences import AUDIENCES, NOT_SAID, audience_reading
from ..charts import ForestRow, forest_svg, interval_methods
from ..grades import grade_table
from ..label import (
    AGE_WORDS,
    LABEL_AGES,
    label_age,
    label_category_metrics,
    label_profile,
)
from ..plain_labels import category_lead, compare_lead, label_lead, overview_lead
from ..selectors import (
    public_run_for_target,
    run_target,
    run_targets,
)
from ..services.calibration_pages import label_calibration
from ..services.judge_trust import (
    HOW_TO_FILL,
    category_trust,
    target_self_preference,
    target_trust_and_gap,
)
from ..services.label_history import label_history
from ..services.swap_study import swap_lines_for_target
from .common import LanguageSwitchMixin, PublicRunMixin


class LabelMixin(LanguageSwitchMixin, PublicRunMixin):
    page_cache_params: tuple[str, ...] = ("run", "age", "lang")

    def age(self) -> str:
        return label_age(self.request.GET.get("age"))

    def language(self, run) -> str:
        """The summary language to read: blank (every language) without asking the database
        when the reader chose none, so a stored label image still costs no query."""
        if not self.request.GET.get("lang"):
            return ""
        return self.lang(run).summary_language

    def profile_for(self, run, pk) -> object:
        target = run_target(run, pk)
        if target is None:
            raise Http404("This model is not part of the published results.")
        return label_profile(run=run, target=target, age=self.age(), language=self.language(run))

    def age_context(self) -> dict:
        """The population switch: (value, words, link keeping the other parameters) of each
        choice, and the one shown."""
        links = []
        for age in LABEL_AGES:
            query = self.request.GET.copy()
            query["age"] = age
            if age == "all":
                query.pop("age")
            links.append((age, AGE_WORDS[age], f"{self.request.path}?{query.urlencode()}"))
        age = self.age()
        return {"age": age, "age_links": links, "reader_age": "" if age == "all" else age}

    def public_run_or_404(self, target_pk=None):
        """The run asked for; without ``?run=``, the headline run in which the model appears
        (a newer run without this model never hides its label)."""
        if target_pk is not None and not self.request.GET.get("run"):
            run = public_run_for_target(target_pk)
        else:
            run = self.get_run()
        if run is None:
            raise Http404("No published results for this model.")
        return run


def _forest(profile) -> str:
    rows = [
        ForestRow(f"{line.grade} · {line.category.name}", line.estimate) for line in profile.lines
    ]
    return forest_svg(rows, title=f"Pass rate per label category, {profile.target.name}")


def _methods(profiles) -> str:
    return interval_methods(
        [ForestRow(line.category.name, line.estimate) for p in profiles for line in p.lines]
    )


class LabelView(LabelMixin, TemplateView):
    """A model's one-page profile: grades per label category with the estimate behind each."""

    template_name = "results/label.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        run = self.public_run_or_404(kwargs["pk"])
        profile = self.profile_for(run, kwargs["pk"])
        context.update(self.run_context(run, target_id=profile.target.pk))
        context.update(self.age_context(), **self.language_context(run))
        context.update(history=self.history(run, profile))
        # Category trust and the agreement gap: one read of the stored judge-trust figures.
        trust, gap = target_trust_and_gap(run, profile.target)
        context.update(
            profile=profile,
            lead=label_lead(profile),
            profiles=[profile],
            grades=grade_table(),
            forest=_forest(profile),
            forest_method=_methods([profile]),
            targets=run_targets(run),
            trust_low_categories={slug for slug, t in trust.items() if t.low},
            judge_self_preference=target_self_preference(run, profile.target),
            judge_agreement_gap=gap,
            swap_lines=swap_lines_for_target(run.pk, profile.target.pk),
        )
        context.update(label_calibration(run, profile.target))
        return context

    def history(self, run, profile) -> dict | None:
        """The model's grades across public runs and versions of its line (`label_history`)."""
        return label_history(run, profile)


class LabelCompareView(LabelMixin, TemplateView):
    """Two models' labels side by side; without both models, the page to choose them."""

    template_name = "results/label_compare.html"
    page_cache_params = ("run", "a", "b", "age", "lang")

    def get_template_names(self) -> list[str]:
        if self.chooses():
            return ["results/label_compare_choose.html"]
        return [self.template_name]

    def chooses(self) -> bool:
        return not (self.request.GET.get("a") and self.request.GET.get("b"))

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        if self.chooses():
            return self.chooser_context(context)
        run = self.public_run_or_404(self.request.GET.get("a"))
        a = self.profile_for(run, self.request.GET.get("a"))
        b = self.profile_for(run, self.request.GET.get("b"))
        by_category = {line.category.pk: line for line in b.lines}
        pairs = [(line, by_category.get(line.category.pk)) for line in a.lines]
        context.update(self.run_context(run))
        context.update(self.age_context(), **self.language_context(run))
        context.update(
            a=a,
            b=b,
            lead=compare_lead(a, b),
            pairs=pairs,
            profiles=[a, b],
            forest_method=_methods([a, b]),
            grades=grade_table(),
            targets=run_targets(run),
        )
        return context

    def chooser_context(self, context: dict) -> dict:
        """The run's models in two lists, the one already chosen (``?a=``) preselected."""
        run = self.get_run()
        if run is None:
            raise Http404("No published results yet.")
        context.update(self.run_context(run))
        context.update(self.age_context(), **self.language_context(run))
        context.update(
            targets=run_targets(run),
            chosen_a=self.request.GET.get("a", ""),
            chosen_b=self.request.GET.get("b", ""),
        )
        return context


class LabelAudienceView(LabelMixin, TemplateView):
    """The label read for one audience (parent, educator, policymaker, product developer)."""

    template_name = "results/label_audience.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        audience = AUDIENCES.get(kwargs["audience"])
        if audience is None:
            raise Http404("No reading for this audience.")
        run = self.public_run_or_404(kwargs["pk"])
        profile = self.profile_for(run, kwargs["pk"])
        context.update(self.run_context(run, target_id=profile.target.pk))
        context.update(self.age_context(), **self.language_context(run))
        context.update(
            profile=profile,
            lead=label_lead(profile),
            reading=audience_reading(profile, audience),
            audiences=AUDIENCES.values(),
            not_said=NOT_SAID,
        )
        return context


class LabelOverviewView(LabelMixin, TemplateView):
    """Every model's grades per label category for one run: alphabetical, no ranking and no
    overall grade."""

    template_name = "results/label_overview.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        run = self.public_run_or_404()
        language = self.language(run)
        profiles = [
            label_profile(run=run, target=t, age=self.age(), language=language)
            for t in run_targets(run)
        ]
        categories = {}
        for profile in profiles:
            for line in profile.lines:
                categories.setdefault(line.category.pk, line.category)
        columns = sorted(categories.values(), key=lambda c: (c.polarity, c.position, c.name))
        rows = []
        for profile in profiles:
            by_cat = {line.category.pk: line for line in profile.lines}
            rows.append((profile, [by_cat.get(c.pk) for c in columns]))
        context.update(self.run_context(run))
        context.update(self.age_context(), **self.language_context(run))
        context.update(columns=columns, rows=rows, grades=grade_table(), lead=overview_lead(rows))
        return context


class LabelCategoryView(LabelMixin, TemplateView):
    """Behind one grade: the category's metrics with this model's pass rates, each leading on
    to its scenarios and transcripts."""

    template_name = "results/label_category.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        run = self.public_run_or_404(kwargs["pk"])
        profile = self.profile_for(run, kwargs["pk"])
        line = next((li for li in profile.lines if li.category.slug == kwargs["slug"]), None)
        if line is None:
            raise Http404("This model has no results in this category.")
        context.update(self.run_context(run, target_id=profile.target.pk))
        context.update(self.age_context(), **self.language_context(run))
        context.update(
            profile=profile,
            line=line,
            lead=category_lead(profile, line),
            category=line.category,
            metrics=label_category_metrics(
                run=run,
                target=profile.target,
                category=line.category,
                language=self.language(run),
            ),
            category_trust=category_trust(run, line.category.slug, profile.target),
            self_preference=target_self_preference(run, profile.target),
            trust_how_to_fill=HOW_TO_FILL,
        )
        return context
