"""The anchor study's public page: figures computed when the study was published."""

from django.http import Http404
from django.views.generic import TemplateView

from core.pagecache import PublishedPageCacheMixin

from ..selectors import published_anchor_studies, published_anchor_study, run_uses_offline_model


class AnchorStudyView(PublishedPageCacheMixin, TemplateView):
    """One published anchor study (``?study=``, default the newest), with the others listed."""

    template_name = "results/anchor_study.html"
    page_cache_params = ("study",)

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        asked = self.request.GET.get("study", "")
        study = published_anchor_study(asked)
        if study is None and asked:
            raise Http404("No published anchor study with this id.")
        context["study"] = study
        context["studies"] = list(published_anchor_studies()[:20]) if study else []
        if study is not None:
            figures = study.figures
            context.update(
                with_anchors=figures.get("with_anchors", {}),
                without_anchors=figures.get("without_anchors", {}),
                paired=figures.get("paired", {}),
                noise=figures.get("checker_noise", {}),
                n_unverified=figures.get("n_unverified", 0),
                offline=run_uses_offline_model(study.with_anchors)
                or run_uses_offline_model(study.without_anchors),
            )
        return context
