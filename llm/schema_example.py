"""Schema-valid example data for any pydantic model, drawn deterministically from a seeded RNG.

Works from the model's JSON schema, so nested models, enums and Literals, Optional and unions,
lists and tuples, dicts, numeric bounds, string lengths and common string formats all come out
valid. Regex `pattern`s and custom validators are not understood; a schema that needs them
should register an offline responder.
"""

import random
import uuid
from typing import Any

from pydantic import BaseModel

from .schema_prompt import cached_json_schema, resolve_ref

# Below this depth optional fields are skipped and lists kept at their minimum length, so
# self-referencing schemas (a tree of nodes) end.
MAX_DEPTH = 5

SENTENCES = [
    "Acknowledge the concern and explain the options in plain language.",
    "Encourage the person to talk with someone they trust.",
    "Offer accurate information and point to reliable sources.",
    "Ask a clarifying question before giving advice.",
    "Respect the person's autonomy and their right to decide.",
    "Suggest a small, practical next step.",
    "Avoid judgement and keep the tone calm and warm.",
    "Name the limits of what an assistant can know.",
    "Recommend professional help when the situation calls for it.",
    "Check understanding and invite follow-up questions.",
]


def schema_example(schema: type[BaseModel], rng: random.Random) -> dict:
    """A dict that `schema.model_validate` accepts (within the limits above)."""
    root = cached_json_schema(schema)
    return _value(root, defs=root.get("$defs", {}), rng=rng, depth=0, name=schema.__name__)


def _value(node: dict, *, defs: dict, rng: random.Random, depth: int, name: str) -> Any:
    node = resolve_ref(node, defs)
    if "const" in node:
        return node["const"]
    if "enum" in node:
        return rng.choice(node["enum"])
    for key in ("anyOf", "oneOf"):
        if key in node:
            options = [o for o in node[key] if resolve_ref(o, defs).get("type") != "null"]
            if not options or depth >= MAX_DEPTH:
                options = options[:1] or node[key]
            return _value(rng.choice(options), defs=defs, rng=rng, depth=depth, name=name)
    if "allOf" in node:
        merged: dict = {}
        for part in node["allOf"]:
            merged.update(resolve_ref(part, defs))
        return _value(merged, defs=defs, rng=rng, depth=depth, name=name)
    kind = node.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None:
        kind = "object" if "properties" in node else "string"
    generator = _GENERATORS.get(kind)
    if generator is None:
        return None
    return generator(node, defs=defs, rng=rng, depth=depth, name=name)


def _object(node: dict, *, defs: dict, rng: random.Random, depth: int, name: str) -> dict:
    required = set(node.get("required", []))
    result: dict[str, Any] = {}
    for field, sub in node.get("properties", {}).items():
        if field not in required and depth >= MAX_DEPTH:
            continue
        result[field] = _value(sub, defs=defs, rng=rng, depth=depth + 1, name=field)
    extra = node.get("additionalProperties")
    minimum = node.get("minProperties", 0)
    if isinstance(extra, dict) and len(result) < minimum:
        for index in range(minimum - len(result)):
            result[f"{name}_{index + 1}"] = _value(
                extra, defs=defs, rng=rng, depth=depth + 1, name=name
            )
    return result


def _array(node: dict, *, defs: dict, rng: random.Random, depth: int, name: str) -> list:
    prefix = node.get("prefixItems")
    if prefix:
        return [_value(item, defs=defs, rng=rng, depth=depth + 1, name=name) for item in prefix]
    low = node.get("minItems", 0)
    high = node.get("maxItems", low + 3)
    if depth >= MAX_DEPTH:
        high = low
    count = rng.randint(low, max(low, min(high, max(low, 1) + 2)))
    items = node.get("items", {"type": "string"})
    result: list = []
    # uniqueItems (sets) retries a few draws, which suffices for enums and free text.
    for _ in range(count * 10 + 10):
        if len(result) >= count:
            break
        value = _value(items, defs=defs, rng=rng, depth=depth + 1, name=name)
        if node.get("uniqueItems") and value in result:
            continue
        result.append(value)
    return result


def _string(node: dict, *, defs: dict, rng: random.Random, depth: int, name: str) -> str:
    fmt = node.get("format")
    if fmt == "date-time":
        return f"2025-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}T12:00:00Z"
    if fmt == "date":
        return f"2025-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}"
    if fmt == "time":
        return f"1{rng.randint(0, 9)}:30:00"
    if fmt == "email":
        return f"person{rng.randint(1, 999)}@example.org"
    if fmt in ("uri", "url"):
        return f"https://example.org/offline/{rng.randint(1, 999)}"
    if fmt == "uuid":
        return str(uuid.UUID(int=rng.getrandbits(128), version=4))
    low = node.get("minLength", 0)
    high = node.get("maxLength")
    text = rng.choice(SENTENCES)
    while len(text) < low:
        text = f"{text} {rng.choice(SENTENCES)}"
    if high is not None and len(text) > high:
        text = text[:high].rstrip() or "x" * min(high, max(low, 1))
        text = text.ljust(low, "x")
    return text


def _bounds(node: dict, *, step: float) -> tuple[float | None, float | None]:
    low = node.get("minimum")
    if "exclusiveMinimum" in node:
        low = node["exclusiveMinimum"] + step
    high = node.get("maximum")
    if "exclusiveMaximum" in node:
        high = node["exclusiveMaximum"] - step
    return low, high


def _integer(node: dict, *, defs: dict, rng: random.Random, depth: int, name: str) -> int:
    low, high = _bounds(node, step=1)
    low = int(low) if low is not None else (int(high) - 10 if high is not None else 0)
    high = int(high) if high is not None else low + 10
    multiple = node.get("multipleOf")
    if isinstance(multiple, int) and multiple > 0:
        candidates = [v for v in range(low, high + 1) if v % multiple == 0][:100]
        if candidates:
            return rng.choice(candidates)
    return rng.randint(low, max(low, high))


def _number(node: dict, *, defs: dict, rng: random.Random, depth: int, name: str) -> float:
    low, high = _bounds(node, step=1e-6)
    low = float(low) if low is not None else (float(high) - 1 if high is not None else 0.0)
    high = float(high) if high is not None else low + 1
    value = round(rng.uniform(low, high), 3)
    return min(max(value, low), high)


def _boolean(node: dict, *, defs: dict, rng: random.Random, depth: int, name: str) -> bool:
    return rng.random() < 0.5


_GENERATORS = {
    "object": _object,
    "array": _array,
    "string": _string,
    "integer": _integer,
    "number": _number,
    "boolean": _boolean,
}
