"""Expert-calibrated rates: prediction-powered inference (PPI) and its power-tuned form (PPI++).

A judge grades every conversation of a target; blind experts grade a random calibration sample
of them. The judge's own rate is biased by however the judge errs; the experts' rate is
unbiased but rests on few conversations. PPI (Angelopoulos, Bates, Fannjiang, Jordan & Zrnic,
"Prediction-powered inference", Science 382, 2023) combines them: the judge's rate on all
conversations, corrected by the mean judge error measured on the calibration sample::

    theta = mean_all(lam * judge) + mean_sample(expert - lam * judge)

Whatever the judge's bias, the correction term removes it in expectation, so the estimate is
unbiased for the experts' rate and its interval keeps its coverage; the better the judge
predicts the experts, the smaller the correction's variance and the narrower the interval
(never wider than the experts alone, to first order, once ``lam`` is tuned). ``lam = 1`` is
classical PPI, ``lam = 0`` the experts alone; PPI++ (Angelopoulos, Duchi & Zrnic, "PPI++:
Efficient prediction-powered inference", arXiv:2311.01453) picks the ``lam`` in [0, 1] that
minimises the estimated variance.

Two designs, two functions:

* :func:`ppi_mean` -- the labelled and the unlabelled items are independent samples (the
  setting of the papers and of the reference implementation ``ppi_py``, which it matches).
* :func:`calibrated_mean` -- the platform's design: the calibration sample is drawn *from* the
  judged conversations (stratified, with known inclusion probabilities), and conversations
  sharing a base scenario are not independent. Its interval is a cluster-robust (linearised)
  variance with a Student t on the clusters' degrees of freedom.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats as _scipy_stats

from stats.bounded_means import bounded_rate_interval
from stats.estimates import Estimate, Unit

PPI_MEAN = "prediction-powered mean, normal interval"
CALIBRATED = "expert-calibrated rate (prediction-powered, stratified inverse-probability weights)"
BOUNDED = "projected onto [0, 1], Wilson-type interval widened to the PPI interval"

# Fewer expert verdicts than this in a stratum leave its judge error unmeasured: one verdict has
# no spread, so the interval would claim a precision the sample cannot show.
MIN_EXPERT_PER_STRATUM = 2
# PPI++ picks the lambda that minimises the *estimated* variance, which makes that estimate
# optimistic when it rests on few clusters: in the suite's simulation (heterogeneous base
# scenarios, a biased judge) the tuned interval covered 90-93 % with 10-40 base scenarios
# holding expert verdicts, 94-95 % from 80 on, while lambda = 1 held 94-96 % throughout for
# 5-10 % more width. Below this many, calibrated_mean uses classical PPI.
MIN_CLUSTERS_TO_TUNE = 80
# A target's calibrated rate is published (every page, the label, the API) from this many
# expert verdicts spread over this many base scenarios: for a rate near one half the interval
# is then about +-0.1 or narrower (the experts' own binomial spread, sqrt(0.25 / 100) = 0.05,
# is the ceiling), and with 20 base scenarios the bounded interval held 94.8-95.2 % coverage
# in the simulation of benchmarks/ppi_coverage.py (98.0-98.4 % at true rates of 0 and 1).
# Below it no number is published (`enough_expert_verdicts`).
LABEL_MIN_EXPERT_VERDICTS = 100
LABEL_MIN_BASE_SCENARIOS = 20


def _vector(values: ArrayLike, what: str, *, allow_nan: bool = False) -> NDArray[np.float64]:
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"{what} must be 1-D; got {arr.ndim}-D")
    bad = ~np.isfinite(arr) if not allow_nan else np.isinf(arr)
    if bad.any():
        raise ValueError(f"{what} must be finite" + (" (nan marks a missing verdict)" * allow_nan))
    return arr


def _normalised(weights: ArrayLike | None, size: int, what: str) -> NDArray[np.float64]:
    """Weights scaled to mean 1 (as ``ppi_py`` does): only their ratios matter."""
    if weights is None:
        return np.ones(size)
    w = _vector(weights, what)
    if w.size != size:
        raise ValueError(f"{what} must have one weight per item ({size}); got {w.size}")
    if (w <= 0).any():
        raise ValueError(f"{what} must be positive")
    return w / w.sum() * size


def _lam_label(lam: float, tuned: bool, untuned_reason: str = "") -> str:
    if tuned:
        return f"PPI++ (power-tuned, lambda = {lam:.3f})"
    if lam == 1.0:
        return f"classical PPI (lambda = 1{untuned_reason})"
    return f"PPI (lambda = {lam:.3f})"


def ppi_mean(
    truth: ArrayLike,
    predicted: ArrayLike,
    predicted_unlabelled: ArrayLike,
    *,
    lam: float | None = None,
    weights: ArrayLike | None = None,
    weights_unlabelled: ArrayLike | None = None,
    confidence: float = 0.95,
    unit: Unit = "proportion",
) -> Estimate:
    """Prediction-powered mean from independent labelled and unlabelled samples.

    Estimates the mean of ``truth`` (expert verdicts, 0/1 for a rate) in the population both
    samples come from: ``n`` labelled items with their ``truth`` and ``predicted`` (judge)
    values, ``N`` unlabelled items with only ``predicted_unlabelled``. With weights scaled to
    mean 1 within each sample (inverse inclusion probabilities, or ``None`` for equal)::

        theta = mean(w_u lam f_u) + mean(w (y - lam f))
        se^2  = var(w_u lam f_u) / N + var(w (y - lam f)) / n      (variances with ddof 0)

    and the interval is ``theta +- z se`` (normal). ``lam=None`` is PPI++: ``lam`` is the
    minimiser of that variance, ``cov(w (y - t), w (f - t)) / ((1 + n / N) var(w (f - t)))``
    with ``t`` the ``lam = 1`` estimate and the variance over both samples pooled, clipped to
    [0, 1]; ``lam=1`` is classical PPI, ``lam=0`` the labelled sample alone. Identical to
    ``ppi_py.ppi_mean_pointestimate`` / ``ppi_mean_ci`` (``alpha = 1 - confidence``).

    Does not apply when the labelled items are part of the unlabelled set or are clustered
    (use :func:`calibrated_mean`); the normal interval needs a few dozen labelled items. The
    value is not clipped to [0, 1]. ``n`` is the labelled count, ``n_clusters`` ``None``.
    """
    y = _vector(truth, "truth")
    f = _vector(predicted, "predicted")
    f_u = _vector(predicted_unlabelled, "predicted_unlabelled")
    n, big_n = y.size, f_u.size
    if f.size != n:
        raise ValueError(f"truth and predicted must have the same length; got {n} and {f.size}")
    if n < 2 or big_n < 1:
        return Estimate.insufficient(
            n=n, unit=unit, method=PPI_MEAN, reason="fewer than two labelled items"
        )
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1; got {confidence!r}")
    w = _normalised(weights, n, "weights")
    w_u = _normalised(weights_unlabelled, big_n, "weights_unlabelled")
    tuned = lam is None
    if lam is None:
        start = (w_u * f_u).mean() + (w * (y - f)).mean()
        grad = w * (y - start)
        grad_hat = w * (f - start)
        cov = 2.0 * ((grad - grad.mean()) * (grad_hat - grad_hat.mean())).mean()
        pooled = np.concatenate([grad_hat, w_u * (f_u - start)]).var(ddof=1)
        lam = float(np.clip(cov / (2.0 * (1.0 + n / big_n) * pooled), 0.0, 1.0))
    value = float((w_u * lam * f_u).mean() + (w * (y - lam * f)).mean())
    se = math.sqrt((w_u * lam * f_u).var() / big_n + (w * (y - lam * f)).var() / n)
    z = float(_scipy_stats.norm.ppf(0.5 + confidence / 2.0))
    return Estimate(
        value=value,
        low=value - z * se,
        high=value + z * se,
        method=f"{PPI_MEAN}, {_lam_label(lam, tuned)}; {n} labelled, {big_n} unlabelled",
        confidence=confidence,
        n=n,
        unit=unit,
        sd=se,
    )


def calibrated_mean(
    judge: ArrayLike,
    expert: ArrayLike,
    *,
    inclusion_probability: ArrayLike | float | None = None,
    clusters: ArrayLike | None = None,
    strata: ArrayLike | None = None,
    lam: float | None = None,
    confidence: float = 0.95,
    unit: Unit = "proportion",
    bounded: bool = True,
) -> Estimate:
    """Expert-calibrated mean of one target's conversations, by prediction-powered inference.

    ``judge[i]`` is the judge's verdict on conversation ``i`` (0/1, or the share of its
    readings that pass) for every one of the target's ``N`` conversations; ``expert[i]`` the
    blind expert verdict where ``i`` is in the calibration sample, ``nan`` elsewhere.
    ``inclusion_probability[i]`` is the known chance that ``i`` was drawn into the sample
    (a number, or one per conversation; ``None``: a simple random sample, ``n / N``);
    ``strata`` (e.g. polarity) the sampling strata; ``clusters`` the base scenarios.

    What it estimates: the rate experts would give the target's conversations. With stratum
    ``h`` holding ``N_h`` conversations and a calibration sample ``S_h`` weighted by ``1 / pi``
    (scaled to sum to ``N_h``: a Hajek mean, the stratum's plain mean when ``pi`` is equal in
    it)::

        theta = sum_h N_h / N * [ lam * mean_h(judge) + weighted_mean_{S_h}(expert - lam judge) ]

    unbiased for the experts' rate whatever the judge's bias (to first order in the weights).

    The interval: ``theta`` is ``sum_i psi_i / N`` with the linearised contribution
    ``psi_i = c_h + lam judge_i + [i in S] w_i (expert_i - lam judge_i - c_h)`` (``c_h`` the
    stratum's weighted mean error), so its variance is estimated from the spread of the
    clusters' totals ``Psi_g``: ``sum_h G_h / (G_h - 1) sum_{g in h} (Psi_g - N_g theta_h)^2 /
    N^2`` -- cluster-robust (CR1), each conversation its own cluster without ``clusters``,
    centred within strata when the clusters nest in them (the strata's sizes are fixed by
    design), else on ``theta``. The interval is ``theta +- t se`` on ``G_s - H`` degrees of
    freedom, ``G_s`` the clusters holding an expert verdict and ``H`` the strata centred in --
    the few-cluster correction, conservative when the judged clusters are many more. The
    variance counts both the judge's sampling noise over all conversations and the
    calibration sample's; it treats the sample as Poisson-sampled within strata, which
    overstates the variance of a fixed-size sample slightly.

    ``lam=None`` is PPI++: the ``lam`` in [0, 1] minimising that cluster-robust variance
    (closed form, it is quadratic in ``lam``) -- with ``MIN_CLUSTERS_TO_TUNE`` or more clusters
    holding expert verdicts; with fewer, tuning makes the interval optimistic and ``lam`` is 1
    (the method says so); ``lam=1`` classical PPI; ``lam=0`` the experts
    alone (the stratified, weighted expert mean with the same variance: the comparison the
    calibrated figure is narrower than).

    Does not apply when the sample was not random (a triage queue of disagreements) or the
    probabilities are not the ones used to draw it: the correction is then biased. Too little
    data gives ``Estimate.insufficient``: fewer than ``MIN_EXPERT_PER_STRATUM`` expert
    verdicts in a stratum, or fewer than two clusters with one.

    A rate is published inside [0, 1] (``bounded``, the default for proportions): the PPI
    estimate, which can leave [0, 1] when the correction overshoots, is projected onto it and
    the interval drawn by :func:`stats.bounded_means.bounded_rate_interval` (Wilson at the
    effective sample size the PPI standard error implies, widened to the PPI interval).
    ``bounded=False`` returns the unbounded estimate and its ``theta +- t se`` interval (what
    the reference implementations compute; ``sd`` is that standard error either way).

    ``n`` is the number of expert verdicts, ``n_clusters`` the clusters holding them (the
    degrees of freedom rest on them); the method says how many conversations were judged.
    """
    f = _vector(judge, "judge")
    y = _vector(expert, "expert", allow_nan=True)
    big_n = f.size
    if y.size != big_n:
        raise ValueError(
            f"judge and expert need one entry per conversation; got {big_n} and {y.size}"
        )
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1; got {confidence!r}")
    labelled = np.isfinite(y)
    n = int(labelled.sum())
    pi = _inclusion(inclusion_probability, big_n, labelled)
    stratum = _labels(strata, big_n, "strata")
    cluster = _labels(clusters, big_n, "clusters")
    method = f"{CALIBRATED}; {big_n} judged conversations"
    if clusters is not None:
        method += ", cluster-robust over base scenarios, t on G - H df"

    n_strata = int(stratum.max()) + 1 if big_n else 0
    per_stratum = np.bincount(stratum[labelled], minlength=n_strata)
    thin = int((per_stratum < MIN_EXPERT_PER_STRATUM).sum()) if big_n else 1
    g_labelled = np.unique(cluster[labelled]).size
    if thin or g_labelled < 2:
        reason = (
            f"fewer than {MIN_EXPERT_PER_STRATUM} expert verdicts in {thin} sampling "
            + ("stratum" if thin == 1 else "strata")
            if thin
            else "expert verdicts from fewer than two base scenarios"
        )
        return Estimate.insufficient(n=n, unit=unit, method=method, reason=reason)

    a, b = _linearised(f, y, labelled, pi, stratum, n_strata)
    u, v, g, centres = _cluster_deviations(a, b, cluster, stratum)
    asked = lam is None
    tuned = asked and g_labelled >= MIN_CLUSTERS_TO_TUNE
    if lam is None:
        # The variance is sum (u + lam v)^2 / N^2: quadratic in lam, least at -u.v / v.v.
        vv = float(v @ v)
        lam = float(np.clip(-(u @ v) / vv, 0.0, 1.0)) if tuned and vv > 0 else 1.0
    units = "base scenarios" if clusters is not None else "expert verdicts"
    untuned = "" if tuned or not asked else f": too few {units} to tune it"
    value = float((a.sum() + lam * b.sum()) / big_n)
    resid = u + lam * v
    se = math.sqrt(float(resid @ resid)) / big_n
    df = max(g_labelled - centres, 1)
    q = float(_scipy_stats.t.ppf(0.5 + confidence / 2.0, df))
    low, high = value - q * se, value + q * se
    method = f"{method}, {_lam_label(lam, tuned, untuned)}"
    if unit == "proportion" and bounded:
        value, low, high, n_eff = bounded_rate_interval(
            value, se, q, fallback_n=_kish_size(pi[labelled]), most_n=big_n, confidence=confidence
        )
        method += f"; {BOUNDED}, effective n = {n_eff:.0f}"
    return Estimate(
        value=value,
        low=low,
        high=high,
        method=method,
        confidence=confidence,
        n=n,
        n_clusters=g_labelled,
        unit=unit,
        sd=se,
    )


def enough_expert_verdicts(n_verdicts: int, n_base_scenarios: int) -> bool:
    """The one rule for publishing a calibrated rate anywhere (label, methodology, metric
    pages, API): ``LABEL_MIN_EXPERT_VERDICTS`` expert verdicts over
    ``LABEL_MIN_BASE_SCENARIOS`` base scenarios. Below it the interval under-covers (90.9 %
    with 17 verdicts over 20 base scenarios, 92.2 % with 34 over 40, in the simulation of
    ``benchmarks/ppi_coverage.py``)."""
    return n_verdicts >= LABEL_MIN_EXPERT_VERDICTS and n_base_scenarios >= LABEL_MIN_BASE_SCENARIOS


def large_enough_for_label(calibrated: Estimate) -> bool:
    """Whether a :func:`calibrated_mean` figure rests on enough expert verdicts (and base
    scenarios holding them) to be shown (:func:`enough_expert_verdicts`)."""
    return (
        calibrated.defined
        and calibrated.has_interval
        and enough_expert_verdicts(calibrated.n, calibrated.n_clusters or 0)
    )


def _kish_size(weights: NDArray[np.float64]) -> float:
    """Kish's effective sample size of the calibration weights: the experts' own n, discounted
    for unequal inclusion probabilities."""
    total = float(weights.sum()) if weights.size else 0.0
    return total * total / float(weights @ weights) if total > 0 else 0.0


def _cluster_deviations(
    a: NDArray[np.float64],
    b: NDArray[np.float64],
    cluster: NDArray[np.intp],
    stratum: NDArray[np.intp],
) -> tuple[NDArray[np.float64], NDArray[np.float64], int, int]:
    """Each cluster's total of ``a`` and of ``b`` less its expected share, scaled so that
    ``sum (u + lam v)^2`` is the variance of ``N theta``; also the number of clusters and of
    the groups they were centred in.

    When every cluster lies inside one stratum, and every stratum holds two clusters or more,
    clusters are centred on their stratum's mean (the stratified with-replacement variance of
    survey practice, Wolter 2007 ch. 6): the strata's sizes are fixed by design, so the
    difference between their rates is no sampling noise. Otherwise on the overall mean.
    Either way scaled by ``G_h / (G_h - 1)`` (CR1).
    """
    g = int(cluster.max()) + 1
    a_g = np.bincount(cluster, weights=a, minlength=g)
    b_g = np.bincount(cluster, weights=b, minlength=g)
    size_g = np.bincount(cluster, minlength=g).astype(np.float64)
    stratum_g = np.zeros(g, dtype=np.intp)
    stratum_g[cluster] = stratum
    nested = bool((stratum_g[cluster] == stratum).all())
    per_stratum = np.bincount(stratum_g)
    if not nested or (per_stratum[per_stratum > 0] < 2).any():
        stratum_g = np.zeros(g, dtype=np.intp)
    h = int(stratum_g.max()) + 1
    clusters_h = np.bincount(stratum_g, minlength=h).astype(np.float64)
    size_h = np.bincount(stratum_g, weights=size_g, minlength=h)
    scale = np.sqrt(clusters_h / (clusters_h - 1.0))[stratum_g]
    deviations = []
    for total in (a_g, b_g):
        mean_h = np.bincount(stratum_g, weights=total, minlength=h) / size_h
        deviations.append(scale * (total - size_g * mean_h[stratum_g]))
    return deviations[0], deviations[1], g, int((clusters_h > 0).sum())


def _inclusion(
    probability: ArrayLike | float | None, size: int, labelled: NDArray[np.bool_]
) -> NDArray[np.float64]:
    if probability is None:
        return np.full(size, labelled.sum() / max(size, 1))
    pi = np.broadcast_to(np.asarray(probability, dtype=np.float64), (size,)).copy()
    drawn = pi[labelled]
    if not np.isfinite(drawn).all() or (drawn <= 0).any() or (drawn > 1).any():
        raise ValueError("inclusion probabilities of sampled conversations must lie in (0, 1]")
    return pi


def _labels(labels: ArrayLike | None, size: int, what: str) -> NDArray[np.intp]:
    if labels is None:
        return np.arange(size, dtype=np.intp) if what == "clusters" else np.zeros(size, np.intp)
    arr = np.asarray(labels)
    if arr.shape != (size,):
        raise ValueError(f"{what} must have one label per conversation ({size}); got {arr.shape}")
    _, codes = np.unique(arr.astype(str) if arr.dtype == object else arr, return_inverse=True)
    return codes.ravel().astype(np.intp)


def _linearised(
    f: NDArray[np.float64],
    y: NDArray[np.float64],
    labelled: NDArray[np.bool_],
    pi: NDArray[np.float64],
    stratum: NDArray[np.intp],
    n_strata: int,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Each conversation's contribution ``psi_i = a_i + lam b_i`` to ``N theta``.

    Within a stratum, the calibration weights are scaled to sum to the stratum's size, and
    ``c_h = m_y - lam m_f`` is its weighted mean error (``m_y``, ``m_f`` the weighted expert and
    judge means of its sample), so ``psi_i = m_y + [S] w (y - m_y) + lam (f - m_f) (1 - [S] w)``.
    """
    size_h = np.bincount(stratum, minlength=n_strata).astype(np.float64)
    raw = np.where(labelled, 1.0 / np.where(labelled, pi, 1.0), 0.0)
    weight_h = np.bincount(stratum, weights=raw, minlength=n_strata)
    w = raw * (size_h / weight_h)[stratum]
    y0 = np.where(labelled, y, 0.0)
    m_y = (np.bincount(stratum, weights=w * y0, minlength=n_strata) / size_h)[stratum]
    m_f = (np.bincount(stratum, weights=w * f, minlength=n_strata) / size_h)[stratum]
    a = m_y + w * (y0 - m_y)
    b = (f - m_f) * (1.0 - w)
    return a, b
