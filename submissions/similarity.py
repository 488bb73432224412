"""Which existing metrics does a text resemble? TF-IDF cosine similarity over current versions.

TF-IDF needs no model download and is fast at registry scale (about a thousand metrics); the
score is shown to people as a hint, never used to merge anything automatically.
"""

from dataclasses import dataclass

from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.metrics.pairwise import linear_kernel

from metrics_registry.models import MetricVersion, ValidationStatus
from metrics_registry.selectors import metric_version_list_current


@dataclass(frozen=True)
class SimilarMetric:
    version: MetricVersion
    score: float


def _document(version: MetricVersion) -> str:
    return f"{version.name}. {version.criterion}"


def similar_metrics(text: str, *, limit: int = 5, min_score: float = 0.12) -> list[SimilarMetric]:
    """The current metric versions closest to `text`, best first, with cosine scores in [0, 1]."""
    if not (text or "").strip():
        return []
    versions = list(
        metric_version_list_current().exclude(metric__validation_status=ValidationStatus.RETIRED)
    )
    if not versions:
        return []
    vectorizer = TfidfVectorizer(stop_words="english", ngram_range=(1, 2), sublinear_tf=True)
    try:
        matrix = vectorizer.fit_transform([_document(v) for v in versions] + [text])
    except ValueError:  # only stop words: nothing to compare
        return []
    scores = linear_kernel(matrix[-1], matrix[:-1]).ravel()
    order = scores.argsort()[::-1][:limit]
    return [
        SimilarMetric(version=versions[i], score=round(float(scores[i]), 3))
        for i in order
        if scores[i] >= min_score
    ]


def submission_similarity_text(submission) -> str:
    return " ".join([submission.title, submission.behavior, submission.context])
