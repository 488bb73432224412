"""Results services: refresh a run's summaries and analyses; generate the synthetic dataset."""

from .refresh import summaries_refresh

__all__ = ["summaries_refresh"]
