from django.http import Http404, HttpResponse
from django.template.loader import render_to_string
from django.utils.cache import patch_cache_control
from django.views import View
from django.views.generic import TemplateView

from ..charts import ForestRow, forest_svg
from ..label import grade_table, label_profile
from ..selectors import run_targets
from .common import PublicRunMixin


class LabelMixin(PublicRunMixin):
    def profile_for(self, run, pk) -> object:
        target = run_targets(run).filter(pk=pk).first() if pk and str(pk).isdigit() else None
        if target is None:
            raise Http404("This model is not part of the published results.")
        return label_profile(run=run, target=target)

    def public_run_or_404(self):
        run = self.get_run()
        if run is None:
            raise Http404("No published results yet.")
        return run


def _forest(profile) -> str:
    rows = [
        ForestRow(f"{line.grade} · {line.category.name}", line.estimate) for line in profile.lines
    ]
    return forest_svg(rows, title=f"Pass rate per label category, {profile.target.name}")


class LabelView(LabelMixin, TemplateView):
    """A model's one-page profile: grades per label category with the estimate behind each."""

    template_name = "results/label.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        run = self.public_run_or_404()
        profile = self.profile_for(run, kwargs["pk"])
        context.update(self.run_context(run))
        context.update(
            profile=profile,
            profiles=[profile],
            grades=grade_table(),
            forest=_forest(profile),
            targets=run_targets(run),
        )
        return context


class LabelCompareView(LabelMixin, TemplateView):
    template_name = "results/label_compare.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        run = self.public_run_or_404()
        a = self.profile_for(run, self.request.GET.get("a"))
        b = self.profile_for(run, self.request.GET.get("b"))
        by_category = {line.category.pk: line for line in b.lines}
        pairs = [(line, by_category.get(line.category.pk)) for line in a.lines]
        context.update(self.run_context(run))
        context.update(
            a=a,
            b=b,
            pairs=pairs,
            profiles=[a, b],
            grades=grade_table(),
            targets=run_targets(run),
        )
        return context


class _SvgView(LabelMixin, View):
    template_name = ""
    download = False

    def get(self, request, pk: int):
        run = self.public_run_or_404()
        profile = self.profile_for(run, pk)
        # Row positions for the image: headings and lines stacked 22 px apart.
        rows, y = [], 96
        for heading, lines in (
            ("Beneficial behaviour promoted", profile.promoted),
            ("Harmful behaviour avoided", profile.avoided),
        ):
            rows.append({"y": y, "heading": heading})
            y += 24
            for line in lines:
                rows.append({"y": y, "line": line})
                y += 22
            y += 8
        body = render_to_string(
            self.template_name,
            {
                **self.run_context(run),
                "profile": profile,
                "rows": rows,
                "height": y + 40,
                "grades": " · ".join(f"{g} {r}" for g, r in grade_table()),
            },
            request=request,
        )
        response = HttpResponse(body, content_type="image/svg+xml; charset=utf-8")
        if request.GET.get("download"):
            name = f"impactbench-label-{run.release.version}-{profile.target.pk}.svg"
            response["Content-Disposition"] = f'attachment; filename="{name}"'
        patch_cache_control(response, public=True, max_age=300)
        return response


class LabelSvgView(_SvgView):
    template_name = "results/label.svg"


class LabelBadgeView(_SvgView):
    template_name = "results/badge.svg"
