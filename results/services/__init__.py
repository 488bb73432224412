"""Results services: refresh a run's summaries and analyses."""

from .refresh import analysis_refresh, results_refresh, summaries_refresh

__all__ = ["analysis_refresh", "results_refresh", "summaries_refresh"]
