"""The client of imported transcripts' models: it refuses every request.

The gateway refuses these configurations before building a request; this is the second lock,
for any path that reaches a provider without it.
"""

from typing import Any

from ..base import ChatProvider, ChatRequest, Failure, FailureKind, FailureOutcome, ProviderReply
from . import FACTS

REFUSAL = "The transcripts of this model were imported: the platform never calls it."


class ImportedTranscriptsProvider(ChatProvider):
    facts = FACTS

    def send(self, request: ChatRequest) -> ProviderReply:
        raise RuntimeError(REFUSAL)

    async def send_async(self, request: ChatRequest, *, session: Any) -> ProviderReply:
        raise RuntimeError(REFUSAL)

    def classify(self, error: BaseException) -> Failure:
        return Failure(FailureKind.PERMANENT, FailureOutcome.FAILED, REFUSAL)


PROVIDER_CLASS = ImportedTranscriptsProvider
