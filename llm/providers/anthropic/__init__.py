"""Anthropic's Messages API: what the provider knows about itself. The client that speaks it
through the official `anthropic` SDK is `client`, loaded when a configuration first calls it."""

from ..base import OutputMode, ProviderFacts

FACTS = ProviderFacts(
    name="anthropic",
    label="Anthropic (Messages API)",
    family="Anthropic",
    default_base_url="https://api.anthropic.com",
    url_markers=("anthropic.com",),
    key_hosts={"ANTHROPIC_API_KEY": ("api.anthropic.com",)},
    structured_modes=(
        OutputMode.JSON_SCHEMA,
        OutputMode.JSON_OBJECT_SCHEMA,
        OutputMode.PROMPT,
    ),
    # The request fields the client fills for a structured reply (`client.messages_request`).
    format_refusal_words=("output_config", "output_format", "json_schema", "tool_choice"),
    # stop_reason "refusal": the model declined (the API's safety classifiers).
    refusal_reasons=("refusal",),
    rate_limit_words=("rate_limit_error",),
    # 529: Anthropic's "overloaded_error", a passing condition.
    overloaded_statuses=(529,),
    # Message Batches (`/v1/messages/batches`).
    has_batches=True,
)
