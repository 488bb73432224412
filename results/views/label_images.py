"""The label as images: the live SVG, the stored PNG and PDF drawn from it, and the badge."""

import logging
from dataclasses import dataclass

from django.conf import settings
from django.http import Http404, HttpResponse
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext as _
from django.views import View

from ..label_export import ExportUnavailable, chromium_path
from ..label_files import label_files_soon, label_image, stored_label
from ..selectors import run_target
from .label import LabelMixin

logger = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 30


@dataclass(frozen=True)
class _Model:
    """A model known by its id only (all a stored file's response names)."""

    pk: int


class _SvgView(LabelMixin, View):
    template_name = ""
    # Images carry no navigation: the same file for every reader, cached for all.
    page_cache_anonymous_only = False
    page_cache_params = ("run", "download", "age", "lang")
    content_type = "image/svg+xml; charset=utf-8"
    extension = "svg"

    def image(self, run, pk: int) -> tuple:
        """(model, content) of the image, drawn from the template."""
        target = self.target(run, pk)
        image = label_image(
            run=run,
            target=target,
            age=self.age(),
            template=self.template_name,
            language=self.language(run),
        )
        return target, image.body

    def target(self, run, pk: int):
        target = run_target(run, pk)
        if target is None:
            raise Http404("This model is not part of the published results.")
        return target

    def get(self, request, pk: int):
        run = self.public_run_or_404(pk)
        try:
            target, content = self.image(run, pk)
        except ExportUnavailable as error:
            # The reason (a server path) goes to the server's log, not into the reader's reply.
            logger.warning("Label %s of run %s not drawn: %s", self.extension, run.pk, error)
            return HttpResponse(
                _("This server cannot draw the label as %(format)s. The label is available as SVG.")
                % {"format": self.extension.upper()},
                status=503,
                content_type="text/plain; charset=utf-8",
            )
        if content is None:
            return self.being_prepared(run, pk)
        response = HttpResponse(content, content_type=self.content_type)
        if request.GET.get("download") or self.extension != "svg":
            age = self.age()
            suffix = "" if age == "all" else f"-{age}"
            if self.language(run):
                suffix += f"-{self.language(run)}"
            name = f"impactbench-label-{run.release.version}-{target.pk}{suffix}.{self.extension}"
            disposition = "attachment" if request.GET.get("download") else "inline"
            response["Content-Disposition"] = f'{disposition}; filename="{name}"'
        return response

    def being_prepared(self, run, pk: int) -> HttpResponse:
        svg = f"{reverse('results:label-svg', args=[pk])}?run={run.pk}"
        if self.language(run):
            svg += f"&lang={self.language(run)}"
        response = HttpResponse(
            _(
                "The %(format)s of this label is being prepared; try again in a minute. The "
                "label is available as SVG now: %(address)s"
            )
            % {"format": self.extension.upper(), "address": svg},
            status=503,
            content_type="text/plain; charset=utf-8",
        )
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response


class LabelSvgView(_SvgView):
    """The label image as SVG: the stored file, else drawn from the template (a cheap
    fallback) while the run's files are queued for drawing. The stored files' words are the
    site's default language: a reader of another (an /es/ address, the language switch) gets
    the SVG drawn from the template in theirs."""

    template_name = "results/label.svg"

    def image(self, run, pk: int) -> tuple:
        if translation.get_language() != settings.LANGUAGE_CODE:
            return super().image(run, pk)
        # A stored file exists only for a model of the run: no query needed to check it.
        stored = stored_label(
            run_id=run.pk, target_id=pk, age=self.age(), fmt="svg", language=self.language(run)
        )
        if stored is not None:
            return _Model(pk), stored
        target, body = super().image(run, pk)
        label_files_soon(run.pk)
        return target, body


class _StoredImageView(LabelSvgView):
    """A label drawn by headless Chromium: only ever the stored file (`results.label_files`),
    over every language or one language's (``?lang=``), worded in the reader's language (an
    /es/ address, the language switch); while it is missing, "being prepared" and one drawing
    queued."""

    def image(self, run, pk: int) -> tuple:
        language = self.language(run)
        stored = stored_label(
            run_id=run.pk,
            target_id=pk,
            age=self.age(),
            fmt=self.extension,
            language=language,
            reader=translation.get_language(),
        )
        if stored is not None:
            return _Model(pk), stored
        target = self.target(run, pk)  # 404 for a model not in the run
        chromium_path()  # raises ExportUnavailable: no drawing would ever come
        label_files_soon(run.pk)
        return target, None


class LabelPngView(_StoredImageView):
    """The label image as PNG."""

    content_type = "image/png"
    extension = "png"


class LabelPdfView(_StoredImageView):
    """The label as a one-page PDF (text stays text)."""

    content_type = "application/pdf"
    extension = "pdf"


class LabelBadgeView(_SvgView):
    template_name = "results/badge.svg"
