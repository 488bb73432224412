"""Statistics for published results: agreement, bootstrap intervals, few-cluster intervals,
multiple testing, rank stability -- and the constructors that wrap them into an ``Estimate``.

Pure NumPy/SciPy (no Django), so the functions run in workers, notebooks and benchmarks alike.
One implementation of each thing: one Fleiss' kappa and one percent agreement
(:mod:`.agreement`), and one resampling engine (:mod:`.resampling`: a compiled, seeded
xoshiro256** generator counting draws per cluster, per kind of cluster or per distinct value)
behind every bootstrap -- :func:`bootstrap_ci` and the distributions of :mod:`.bootstrap` and
:mod:`.two_stage`, and the batched figures of :mod:`.batched`, which share one resampling
among the data sets with the same number of clusters. The figure constructors in
:mod:`.figures` build on them and on the bounded intervals of :mod:`.bounds` (Wilson on the
effective sample size for proportions, its image for chance-corrected coefficients,
Newcombe's score interval for differences of rates), which never collapse to a point, and
so do the judge figures: expert-calibrated rates by prediction-powered inference
(:mod:`.ppi`), a panel of judges (:mod:`.panel`), judge trust against blind experts
(:mod:`.judge_trust`) and swap studies (:mod:`.swap`). The engine's compiled code is loaded
on its first use, or ahead of it by :func:`load_kernels`.

Conventions shared by every function here:

* ``counts[i, k]`` is the number of raters who put item ``i`` in category ``k`` (the layout of
  ``statsmodels.stats.inter_rater.fleiss_kappa``); :func:`category_counts` builds it from labels.
* ``data[r, u]`` is rater ``r``'s value for unit ``u`` (the layout of Krippendorff and of the
  ``krippendorff`` package); ``np.nan`` (or ``None`` in object arrays) marks a missing value.
* Chance-corrected coefficients (Fleiss' and Cohen's kappa, Krippendorff's alpha) are ``0/0``
  when the data show no variation at all (every rating falls in one category). They return
  ``nan`` then -- "undefined", as scikit-learn and statsmodels do -- never ``1.0``: identical
  ratings say nothing about whether raters *could* discriminate, and a published table must not
  read that as perfect reliability. :func:`percent_agreement` and :func:`unanimity` still report
  the raw agreement (``1.0``) for such data.
* Input that cannot give a meaningful value raises ``ValueError`` with the reason: empty input,
  fewer than two raters, no pairable unit, mismatched lengths, non-finite numbers, negative or
  fractional counts. The :mod:`.figures` constructors never raise for too little data: they
  return ``Estimate.insufficient`` with the reason.
"""

from .age_gap import AGE_GAP_METHOD, AgeGapTest, age_gap_test
from .agreement import (
    category_counts,
    cohen_kappa,
    fleiss_from_sums,
    fleiss_item_sums,
    fleiss_kappa,
    majority_vote,
    pair_agreement,
    percent_agreement,
    unanimity,
)
from .batched import (
    cluster_sum_distributions,
    clustered_mean_intervals,
    shared_block_hits,
    two_stage_sum_distributions,
)
from .bootstrap import (
    bootstrap_ci,
    bootstrap_distribution,
    cluster_sum_distribution,
    clustered_mean_ci,
    pass_rate_ci,
)
from .differences import PAIRED_DIFFERENCE, PairedDifferences, paired_rate_differences
from .few_clusters import (
    STRATIFIED_WILSON,
    WILSON_EFFECTIVE,
    benjamini_hochberg,
    design_effect,
    effective_wilson,
    group_correlations,
    intra_cluster_correlation,
    shrunk_correlation,
    stratified_wilson,
    wilson_interval,
)
from .figures import (
    agreement_estimates,
    coefficient_interval,
    cohen_estimate,
    fleiss_estimate,
    proportion_estimate,
    proportion_from_clusters,
    share_estimates,
    sums_estimate,
    sums_estimates,
)
from .judge_bias import AgreementGap, agreement_gaps
from .judge_trust import JudgeTrust, judge_trust, judge_trust_by, trust_badge
from .krippendorff import krippendorff_alpha
from .krippendorff_figures import krippendorff_estimate
from .mean_figures import mean_estimate, resampled_estimate
from .panel import JudgeRate, PanelVerdicts, judge_pass_rates, panel_agreement, panel_verdicts
from .percentiles import percentile_interval
from .ppi import calibrated_mean, enough_expert_verdicts, large_enough_for_label, ppi_mean
from .ranking import (
    bradley_terry,
    bradley_terry_estimates,
    kendall_tau_b_rows,
    rank_stability,
)
from .resampling import cluster_hits, load_kernels
from .swap import pass_rate_shift, single_vs_majority, swap_rank_agreement, verdict_flip_share
from .two_stage import two_stage_sum_distribution

__all__ = [
    "AGE_GAP_METHOD",
    "AgeGapTest",
    "JudgeRate",
    "AgreementGap",
    "JudgeTrust",
    "PAIRED_DIFFERENCE",
    "PairedDifferences",
    "PanelVerdicts",
    "STRATIFIED_WILSON",
    "WILSON_EFFECTIVE",
    "benjamini_hochberg",
    "bootstrap_ci",
    "bootstrap_distribution",
    "bradley_terry",
    "bradley_terry_estimates",
    "calibrated_mean",
    "category_counts",
    "cluster_hits",
    "cluster_sum_distribution",
    "cluster_sum_distributions",
    "clustered_mean_ci",
    "clustered_mean_intervals",
    "age_gap_test",
    "agreement_estimates",
    "coefficient_interval",
    "cohen_estimate",
    "cohen_kappa",
    "design_effect",
    "effective_wilson",
    "fleiss_estimate",
    "fleiss_from_sums",
    "fleiss_item_sums",
    "fleiss_kappa",
    "group_correlations",
    "intra_cluster_correlation",
    "judge_pass_rates",
    "agreement_gaps",
    "judge_trust",
    "judge_trust_by",
    "kendall_tau_b_rows",
    "krippendorff_alpha",
    "krippendorff_estimate",
    "enough_expert_verdicts",
    "large_enough_for_label",
    "load_kernels",
    "majority_vote",
    "mean_estimate",
    "pair_agreement",
    "paired_rate_differences",
    "panel_agreement",
    "panel_verdicts",
    "pass_rate_ci",
    "pass_rate_shift",
    "percent_agreement",
    "percentile_interval",
    "ppi_mean",
    "proportion_estimate",
    "proportion_from_clusters",
    "rank_stability",
    "resampled_estimate",
    "share_estimates",
    "shrunk_correlation",
    "shared_block_hits",
    "single_vs_majority",
    "stratified_wilson",
    "sums_estimate",
    "sums_estimates",
    "swap_rank_agreement",
    "trust_badge",
    "two_stage_sum_distribution",
    "two_stage_sum_distributions",
    "unanimity",
    "verdict_flip_share",
    "wilson_interval",
]
