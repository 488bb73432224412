"""Which text representation best separates near-duplicate metrics from merely related ones?

Scores every pair of `tests/data/metric_pairs.csv` (a submission-like text against a catalogue
metric, labelled duplicate or not) with each TF-IDF variant, fitted as the platform fits it: on
the demo catalogue plus the text being compared. Prints ROC AUC, and the F1 at the best threshold.

    .venv/bin/python benchmarks/similarity_variants.py
"""

import csv
import os
import sys
from pathlib import Path

import django
import numpy as np
from sklearn.metrics import f1_score, roc_auc_score

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "impactbench_site.settings.local")
django.setup()

from metrics_registry.demo_catalog import DEMO_METRICS  # noqa: E402
from submissions.similarity import (  # noqa: E402
    ADOPTED_VARIANT,
    NEAR_DUPLICATE_SCORE,
    VARIANTS,
    pair_scores,
)  # noqa: E402


def load_pairs() -> tuple[list[str], list[str], np.ndarray]:
    with open(ROOT / "tests" / "data" / "metric_pairs.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    return (
        [r["text"] for r in rows],
        [r["metric"] for r in rows],
        np.array([int(r["duplicate"]) for r in rows]),
    )


def best_threshold(scores: np.ndarray, labels: np.ndarray) -> tuple[float, float]:
    candidates = sorted(set(np.round(scores, 3)))
    best = max(candidates, key=lambda t: f1_score(labels, scores >= t))
    return float(best), float(f1_score(labels, scores >= best))


def main() -> None:
    texts, metrics, labels = load_pairs()
    corpus = [f"{name}. {criterion}" for name, criterion, *_ in DEMO_METRICS]
    print(f"{len(labels)} pairs ({labels.sum()} duplicates), corpus of {len(corpus)} metrics")
    print(f"{'variant':<14} {'ROC AUC':>8} {'threshold':>10} {'F1':>6}")
    for name in VARIANTS:
        scores = np.array(pair_scores(texts, metrics, corpus=corpus, variant=name))
        auc = roc_auc_score(labels, scores)
        threshold, f1 = best_threshold(scores, labels)
        print(f"{name:<14} {auc:>8.3f} {threshold:>10.3f} {f1:>6.3f}")
        if name == ADOPTED_VARIANT:
            shown = np.round(scores, 2)  # the flag reads the score as the page shows it
            adopted = f1_score(labels, shown >= NEAR_DUPLICATE_SCORE)
    print(
        f"adopted: {ADOPTED_VARIANT}, near-duplicate at >= {NEAR_DUPLICATE_SCORE}: F1 {adopted:.3f}"
    )


if __name__ == "__main__":
    main()
