"""Reference computations, written out from their textbook formulas, that the statistics are
checked against."""

import numpy as np
from scipy.stats import chi2
from statsmodels.stats.proportion import proportion_confint


def effective_wilson_reference(hits, clusters, prior=1.0, alpha=0.05):
    """statsmodels' Wilson interval on the effective size ``N / deff``, ``deff = 1 + (sum
    n_c^2 / N - 1) rho``, with the one-way ANOVA intra-cluster correlation (Donner 1986)
    shrunk towards ``prior`` by (G - 1) / (G + 3); the prior alone when nothing varies; and
    the Poisson bound next to a handful of effective counts."""
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
    low, high = proportion_confint(p * size, size, alpha=alpha, method="wilson")
    if size < big_n:
        # Brown, Cai & DasGupta (2001): the Poisson bound at up to 2 effective passes or
        # fails (3 above 50 effective outcomes).
        most = 2 if size <= 50 else 3
        if 0 < p * size <= most:
            low = min(low, chi2.ppf(alpha / 2, 2 * p * size) / (2 * size))
        if 0 < (1 - p) * size <= most:
            high = max(high, 1 - chi2.ppf(alpha / 2, 2 * (1 - p) * size) / (2 * size))
    return low, high


def metric_design_effects_reference(cells, rho_by_scope):
    """``{(scope, target, version): deff}`` of every metric x model rate: the metric's one-way
    ANOVA intra-cluster correlation, its models' sums of squares and degrees of freedom added
    (clusters: base scenarios, both ages together for "all"), shrunk towards the run's by
    df / (df + 4); the run's alone when no model's outcomes vary."""
    out = {}
    for scope, ages in (("teen", [0]), ("adult", [1]), ("all", [0, 1])):
        clusters = {}
        for t, v, b, a, n, y in zip(
            cells.target, cells.version, cells.base, cells.age, cells.n, cells.passed, strict=True
        ):
            if a in ages:
                entry = clusters.setdefault((int(v), int(t)), {}).setdefault(int(b), [0.0, 0.0])
                entry[0] += y
                entry[1] += n
        for version in sorted({v for v, _ in clusters}):
            ssb = ssw = dfb = dfw = total_n = count = varied = 0.0
            for (v, _t), bases in clusters.items():
                if v != version:
                    continue
                y = np.array([c[0] for c in bases.values()])
                m = np.array([c[1] for c in bases.values()])
                p = y.sum() / m.sum()
                ssb += (m * (y / m - p) ** 2).sum()
                ssw += (y - y**2 / m).sum()
                dfb += y.size - 1
                dfw += m.sum() - y.size
                total_n += m.sum()
                count += y.size
                varied += 0 < p < 1
            rho = 0.0
            if dfb > 0 and dfw > 0:
                msb, msw = ssb / dfb, ssw / dfw
                rho = min(1.0, max(0.0, (msb - msw) / (msb + (total_n / count - 1) * msw)))
            weight = dfb / (dfb + 4) if varied else 0.0
            shrunk = weight * rho + (1 - weight) * rho_by_scope[scope]
            for (v, t), bases in clusters.items():
                if v == version:
                    m = np.array([c[1] for c in bases.values()])
                    out[(scope, t, v)] = 1 + ((m**2).sum() / m.sum() - 1) * shrunk
    return out
