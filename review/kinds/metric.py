"""Metric items: a metric's current version rated for fidelity to its source."""

from collections.abc import Iterable
from typing import Any

from django.db.models import Prefetch

from metrics_registry.models import Metric
from submissions.models import MetricCandidate

from .base import Candidate, KindAdapter, Question, register
from .questions import FORMS
from .sources import metric_first_version, metric_source_submissions


class MetricAdapter(KindAdapter):
    kind = "metric"
    template_name = "review/items/_metric.html"
    contests_metric = True
    support_phrase = "rated it faithful"
    language_source = (Metric, "current_version__language")

    def metric_support(self, rating) -> bool:
        return rating.answers.get("fidelity") == "faithful"

    def questions(self, item) -> list[Question]:
        return list(FORMS["metric"])

    def candidates(self) -> Iterable[Candidate]:
        metrics = (
            Metric.objects.exclude(validation_status__in=("draft", "retired"))
            .filter(current_version__isnull=False)
            .select_related("current_version")
            .prefetch_related(
                "current_version__subareas",
                Prefetch(
                    "source_candidates",
                    queryset=MetricCandidate.objects.select_related("submission"),
                ),
            )
            .order_by("pk")
        )
        for metric in metrics:
            version = metric.current_version
            subareas = sorted(s.slug for s in version.subareas.all())
            submitters = {c.submission.contributor_id for c in metric.source_candidates.all()}
            yield Candidate(
                object_id=metric.pk,
                # A metric in several subareas is stratified under its first (alphabetical)
                # one, so every candidate sits in exactly one stratum.
                strata={
                    "subarea": subareas[0] if subareas else "",
                    "age_context": version.age_contexts,
                    "model": "",
                },
                metric_id=metric.pk,
                # The accepting researcher credits the contributor on the metric; a metric
                # accepted without that credit still belongs to whoever submitted the construct.
                owner_id=metric.contributor_id or next(iter(sorted(submitters)), None),
            )

    def render_context(self, item, assignment) -> dict[str, Any]:
        metric = (
            Metric.objects.select_related(
                "current_version", "current_version__label_category", "benchmark"
            )
            .prefetch_related("current_version__subareas")
            .get(pk=item.object_id)
        )
        submissions = metric_source_submissions(metric)
        return {
            "metric": metric,
            "version": metric.current_version,
            "submissions": submissions,
            "first_version": metric_first_version(metric, submissions=submissions),
        }


register(MetricAdapter())
