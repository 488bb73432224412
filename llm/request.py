"""Turning a gateway call into the request actually sent: messages, parameters, fingerprint.

Also the validator that turns a reply into the caller's pydantic schema.
"""

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from django.utils.translation import gettext as _
from pydantic import BaseModel, ValidationError

from .cache import request_fingerprint
from .exceptions import LLMError
from .models import ModelConfiguration, ModelRole
from .schema_prompt import response_format, schema_instructions
from .transport import OutputRejected

T = TypeVar("T", bound=BaseModel)

REASK_ERROR_LIMIT = 2000
_FENCED_JSON = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


@dataclass(frozen=True)
class PreparedRequest:
    messages: list[dict]
    parameters: dict
    fingerprint: str
    seed: int | None


def prepare_request(
    *,
    configuration: ModelConfiguration,
    messages: list[dict],
    role: str,
    seed: int | None,
    params: dict,
    schema: type[BaseModel] | None = None,
) -> PreparedRequest:
    if role not in ModelRole.values:
        raise ValueError(f"Unknown model role {role!r}; use one of {', '.join(ModelRole.values)}.")
    if configuration.is_imported:
        # It only names the model whose transcripts were imported: there is nothing to call.
        raise LLMError(
            _(
                "The model configuration %(configuration_name)r names imported "
                "transcripts; the platform never calls it."
            )
            % {"configuration_name": configuration.name}
        )
    if not configuration.is_active:
        raise LLMError(
            _("The model configuration %(configuration_name)r is switched off.")
            % {"configuration_name": configuration.name}
        )
    system_parts = [configuration.system_prompt.strip()] if configuration.system_prompt else []
    rest = list(messages)
    # One leading system message: several local chat templates reject more than one.
    while rest and rest[0].get("role") == "system":
        system_parts.append(str(rest.pop(0).get("content") or ""))
    if schema is not None:
        system_parts.append(schema_instructions(schema))
    composed = [{"role": "system", "content": "\n\n".join(system_parts)}] if system_parts else []
    composed += [dict(m) for m in rest]

    effective_seed = seed if seed is not None else configuration.seed
    parameters: dict[str, Any] = {
        "temperature": configuration.temperature,
        "top_p": configuration.top_p,
        "max_tokens": configuration.max_tokens,
    }
    parameters.update(
        {
            k: v
            for k, v in (configuration.extra_params or {}).items()
            if not k.startswith("offline_")
        }
    )
    parameters.update(params)
    parameters["seed"] = effective_seed
    if schema is not None:
        parameters["response_format"] = response_format(schema, configuration.structured_output)
    parameters = {k: v for k, v in parameters.items() if v is not None}
    fingerprint = request_fingerprint(
        configuration=configuration,
        messages=composed,
        parameters=parameters,
        schema_name=schema.__name__ if schema is not None else "",
    )
    return PreparedRequest(composed, parameters, fingerprint, effective_seed)


def json_validator(schema: type[T]) -> Callable[[str], T]:
    def validate(text: str) -> T:
        candidate = text.strip()
        # Models often wrap JSON in a Markdown fence despite being told not to.
        match = _FENCED_JSON.match(candidate)
        if match:
            candidate = match.group(1)
        try:
            return schema.model_validate_json(candidate)
        except ValidationError as exc:
            raise OutputRejected(str(exc)[:REASK_ERROR_LIMIT]) from exc

    return validate
