"""Imported transcripts: the "provider" of a model whose conversations were imported, not
simulated. Its configurations only name the model that answered; nothing is ever sent to it
(`llm.request.prepare_request` refuses it before any attempt, and `client` refuses again)."""

from ..base import OutputMode, ProviderFacts

FACTS = ProviderFacts(
    name="imported",
    label="Imported transcripts (never called)",
    structured_modes=(OutputMode.PROMPT,),
)
