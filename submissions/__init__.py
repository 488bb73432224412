"""Contributions: construct submissions, the drafting of metric candidates by a model, the
researchers' review of candidates, and the contact form's enquiries.

Accepting a candidate creates a registry metric through ``metrics_registry``'s services.
Imports ``core``, ``llm`` and ``metrics_registry``.
"""
