"""Time stats.bootstrap_ci against scipy.stats.bootstrap on a results-sized data set.

48,540 binary outcomes from 8,090 base scenarios (6 variants each), 10,000 resamples, 95 %
percentile intervals. scipy.stats.bootstrap (unclustered mean, vectorized=True) is the yardstick;
it runs in batches of 1,000 resamples so that it needs ~0.8 GB instead of ~8 GB.

Run from the repository root: ``.venv/bin/python benchmarks/bootstrap.py``.
"""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import best_time, scipy_reference_interval  # noqa: E402
from stats import bootstrap_ci  # noqa: E402

N_CLUSTERS = 8_090
PER_CLUSTER = 6
N_RESAMPLES = 10_000
REPEATS = 3


def main() -> None:
    rng = np.random.default_rng(2024)
    # Variants of one base scenario share its difficulty: pass probabilities vary by cluster.
    difficulty = rng.beta(4, 2, size=N_CLUSTERS)
    outcomes = (rng.random((N_CLUSTERS, PER_CLUSTER)) < difficulty[:, None]).ravel().astype(float)
    clusters = np.repeat(np.arange(N_CLUSTERS), PER_CLUSTER)
    print(
        f"data: {outcomes.size:,} binary outcomes in {N_CLUSTERS:,} clusters of {PER_CLUSTER}, "
        f"mean {outcomes.mean():.4f}; {N_RESAMPLES:,} resamples, 95 % percentile intervals"
    )

    reference, scipy_seconds = scipy_reference_interval(outcomes, N_RESAMPLES)

    print(
        f"scipy.stats.bootstrap unclustered: {scipy_seconds:.2f} s, "
        f"interval ({reference.low:.4f}, {reference.high:.4f})"
    )
    # Continuous scores defeat the count shortcuts (every cluster and value is distinct), so
    # these show the general index-resampling path; one run each, they take seconds.
    scores = outcomes + rng.normal(scale=0.1, size=outcomes.size)
    cases = [
        ("clustered", REPEATS, lambda: bootstrap_ci(outcomes, clusters, n_resamples=N_RESAMPLES)),
        ("unclustered", REPEATS, lambda: bootstrap_ci(outcomes, n_resamples=N_RESAMPLES)),
        (
            "clustered median",
            REPEATS,
            lambda: bootstrap_ci(outcomes, clusters, n_resamples=N_RESAMPLES, statistic="median"),
        ),
        (
            "unclustered median, continuous scores",
            1,
            lambda: bootstrap_ci(scores, n_resamples=N_RESAMPLES, statistic="median"),
        ),
        (
            "clustered, continuous scores",
            1,
            lambda: bootstrap_ci(scores, clusters, n_resamples=N_RESAMPLES),
        ),
        (
            "unclustered, continuous scores",
            1,
            lambda: bootstrap_ci(scores, n_resamples=N_RESAMPLES),
        ),
    ]
    for name, repeats, func in cases:
        seconds, (low, high) = best_time(func, repeats)
        print(
            f"bootstrap_ci {name}: {seconds:.3f} s = {seconds / scipy_seconds:.4f} × "
            f"scipy.stats.bootstrap ({scipy_seconds:.2f} s), interval ({low:.4f}, {high:.4f})"
        )


if __name__ == "__main__":
    main()
