"""Which existing metrics does a submission resemble? TF-IDF cosine over current metric versions.

One function serves the contributor's status page and the researcher's review page, so both see
the same score for the same pair. TF-IDF needs no model download and is fast at registry scale
(about a thousand metrics). The variant in use won on the labelled pairs in
`tests/data/metric_pairs.csv` (see `benchmarks/similarity_variants.py`); no offline sentence
embedding model ships in a package here, so none was compared. The score is a hint shown to
people, never used to merge anything automatically.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from metrics_registry.models import MetricVersion, ValidationStatus
from metrics_registry.selectors import metric_version_list_current

if TYPE_CHECKING:
    from sklearn.feature_extraction.text import TfidfVectorizer

# scikit-learn is imported where it is used, not here: this module is on the URLconf's import
# path, and importing scikit-learn takes about 1.5 s, which every process's first request (or
# the demo's start) would otherwise wait for.

# At or above this score (as shown, to two decimals) a metric is flagged to researchers as a
# likely near-duplicate. On the labelled pairs it flags no non-duplicate (precision 1.0, recall
# 0.84); the best-F1 cut (0.20) also flagged merely related metrics in a demo walk.
NEAR_DUPLICATE_SCORE = 0.23
# Below this (about the 95th percentile of a text against the whole demo catalogue) the metric
# is not listed at all.
MIN_SCORE = 0.12


def _word() -> TfidfVectorizer:
    # Heavy (about 1.4 s): imported when similarity is computed, not on the URLconf's path.
    from sklearn.feature_extraction.text import TfidfVectorizer

    return TfidfVectorizer(stop_words="english", ngram_range=(1, 2), sublinear_tf=True)


def _char() -> TfidfVectorizer:
    # Character n-grams inside word boundaries match "reconnect"/"reconnecting", "friend"/"friends".
    # Heavy: imported when similarity is computed, as in _word.
    from sklearn.feature_extraction.text import TfidfVectorizer

    return TfidfVectorizer(analyzer="char_wb", ngram_range=(3, 5), sublinear_tf=True)


# name -> the vectorizers whose cosines are averaged.
VARIANTS: dict[str, tuple[Callable[[], TfidfVectorizer], ...]] = {
    "word 1-2": (_word,),
    "char 3-5": (_char,),
    "word + char": (_word, _char),
}
ADOPTED_VARIANT = "char 3-5"


def score_matrix(
    queries: Sequence[str], documents: Sequence[str], *, variant: str = ADOPTED_VARIANT
) -> np.ndarray:
    """Cosine similarity of each query to each document (queries × documents), in [0, 1].

    The vocabulary is fitted on documents and queries together, so a word only the query uses
    still counts against the match.
    """
    # Heavy: imported when similarity is computed, as in _word.
    from sklearn.metrics.pairwise import linear_kernel

    total = np.zeros((len(queries), len(documents)))
    for make in VARIANTS[variant]:
        try:
            matrix = make().fit_transform([*documents, *queries])
        except ValueError:  # nothing but stop words: this representation has nothing to compare
            continue
        total += linear_kernel(matrix[len(documents) :], matrix[: len(documents)])
    return total / len(VARIANTS[variant])


def pair_scores(
    texts: Sequence[str], others: Sequence[str], *, corpus: Sequence[str], variant: str
) -> list[float]:
    """The score of each (text, other) pair, fitted on a corpus as the registry would be."""
    documents = list(dict.fromkeys([*corpus, *others]))
    position = {doc: i for i, doc in enumerate(documents)}
    matrix = score_matrix(texts, documents, variant=variant)
    return [float(matrix[i, position[other]]) for i, other in enumerate(others)]


@dataclass(frozen=True)
class SimilarMetric:
    version: MetricVersion
    score: float

    @property
    def near_duplicate(self) -> bool:
        return self.score >= NEAR_DUPLICATE_SCORE


def _document(version: MetricVersion) -> str:
    return f"{version.name}. {version.criterion}"


def similar_metrics(
    text: str, *, exclude_metric_ids: Sequence[int] = (), limit: int = 5
) -> list[SimilarMetric]:
    """The current metric versions closest to `text`, best first."""
    if not (text or "").strip():
        return []
    versions = list(
        metric_version_list_current()
        .exclude(metric__validation_status=ValidationStatus.RETIRED)
        .exclude(metric_id__in=list(exclude_metric_ids))
    )
    if not versions:
        return []
    scores = score_matrix([text], [_document(v) for v in versions]).ravel()
    order = scores.argsort()[::-1][:limit]
    return [
        SimilarMetric(version=versions[i], score=round(float(scores[i]), 2))
        for i in order
        if scores[i] >= MIN_SCORE
    ]


def submission_similarity_text(submission) -> str:
    return ". ".join(part for part in (submission.title, submission.behavior) if part.strip())


def similar_metrics_for_submission(submission, *, limit: int = 5) -> list[SimilarMetric]:
    """What the contributor and the researcher both see: never the submission's own metrics."""
    own = [
        metric_id
        for metric_id in submission.candidates.values_list("metric_id", flat=True)
        if metric_id
    ]
    return similar_metrics(
        submission_similarity_text(submission), exclude_metric_ids=own, limit=limit
    )
