"""Model configurations, the roles they fill, and the record of every model call.

One module per concern: `configuration` (endpoints, models, parameters, prices and roles),
`calls` (the call log, stored prompts and the response cache) and `leases` (request slots of
the database limits backend). Everything is importable from `llm.models`.
"""

from .calls import ERROR_OUTCOMES, CallOutcome, LLMCall, LLMResponseCache, PromptText
from .configuration import (
    ENV_VAR_NAME_VALIDATOR,
    STRUCTURED_MODE_ORDER,
    TOKENS_PER_PRICE_UNIT,
    ModelConfiguration,
    ModelRole,
    ModelRoleAssignment,
    Provider,
    StructuredMode,
    provider_choices,
)
from .leases import RequestLease

__all__ = [
    "ENV_VAR_NAME_VALIDATOR",
    "ERROR_OUTCOMES",
    "STRUCTURED_MODE_ORDER",
    "TOKENS_PER_PRICE_UNIT",
    "CallOutcome",
    "LLMCall",
    "LLMResponseCache",
    "ModelConfiguration",
    "ModelRole",
    "ModelRoleAssignment",
    "PromptText",
    "Provider",
    "RequestLease",
    "StructuredMode",
    "provider_choices",
]
