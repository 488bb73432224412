"""Reference computations, written out from their textbook formulas, that the statistics are
checked against."""

import numpy as np
from statsmodels.stats.proportion import proportion_confint


def effective_wilson_reference(hits, clusters, prior=1.0, alpha=0.05):
    """statsmodels' Wilson interval on the effective size ``N / deff``, ``deff = 1 + (sum
    n_c^2 / N - 1) rho``, with the one-way ANOVA intra-cluster correlation (Donner 1986)
    shrunk towards ``prior`` by (G - 1) / (G + 3); the prior alone when nothing varies."""
    hits = np.asarray(hits, dtype=float)
    clusters = np.asarray(clusters)
    labels = np.unique(clusters)
    y = np.array([hits[clusters == c].sum() for c in labels])
    m = np.array([(clusters == c).sum() for c in labels], dtype=float)
    big_n, g = m.sum(), labels.size
    p = y.sum() / big_n
    rho, weight = 0.0, 0.0
    if 0 < p < 1:
        weight = (g - 1) / (g - 1 + 4)
        if g > 1 and big_n > g:
            msb = (m * (y / m - p) ** 2).sum() / (g - 1)
            msw = (y - y**2 / m).sum() / (big_n - g)
            n0 = m.mean()
            rho = min(1.0, max(0.0, (msb - msw) / (msb + (n0 - 1) * msw)))
    rho = weight * rho + (1 - weight) * prior
    size = big_n / (1 + ((m**2).sum() / big_n - 1) * rho)
    return proportion_confint(p * size, size, alpha=alpha, method="wilson")
