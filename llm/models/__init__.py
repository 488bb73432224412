"""Model configurations, the roles they fill, and the record of every model call.

One module per concern: `configuration` (endpoints, models, parameters, prices and roles),
`calls` (the call log, stored prompts and the response cache), `batches` (requests sent
through the providers' batch APIs), `usage` (running totals of
each run's call log), `reconciliation` (what the provider billed for attempts of unknown
outcome) and `leases` (request slots of the database limits backend). Everything
is importable from `llm.models`.
"""

from .batches import BatchRequest, BatchRequestStatus, BatchStatus, LLMBatch
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
from .reconciliation import (
    BILL_KNOWN_STATES,
    SETTLED_STATES,
    CallReconciliation,
    ReconcileState,
)
from .usage import COST_UNITS_PER_DOLLAR, USAGE_SHARDS, RunUsageTotal

__all__ = [
    "BatchRequest",
    "BatchRequestStatus",
    "BatchStatus",
    "LLMBatch",
    "COST_UNITS_PER_DOLLAR",
    "ENV_VAR_NAME_VALIDATOR",
    "ERROR_OUTCOMES",
    "SETTLED_STATES",
    "BILL_KNOWN_STATES",
    "STRUCTURED_MODE_ORDER",
    "TOKENS_PER_PRICE_UNIT",
    "USAGE_SHARDS",
    "CallOutcome",
    "CallReconciliation",
    "LLMCall",
    "LLMResponseCache",
    "ModelConfiguration",
    "ModelRole",
    "ModelRoleAssignment",
    "PromptText",
    "Provider",
    "ReconcileState",
    "RequestLease",
    "RunUsageTotal",
    "StructuredMode",
    "provider_choices",
]
