"""Validate real API responses against the OpenAPI schema drf-spectacular generates.

OpenAPI 3.0's `nullable` is not JSON Schema; it is rewritten to an `anyOf` with null before
the response is checked with `jsonschema` (Draft 2020-12).
"""

import re
from functools import cache

import jsonschema
from drf_spectacular.generators import SchemaGenerator


@cache
def openapi() -> dict:
    return SchemaGenerator().get_schema(request=None, public=True)


def _convert(node):
    if isinstance(node, dict):
        node = {k: _convert(v) for k, v in node.items()}
        if node.pop("nullable", False):
            node = {"anyOf": [node, {"type": "null"}]}
        if "$ref" in node:
            node["$ref"] = node["$ref"].replace("#/components/schemas/", "#/$defs/")
        return node
    if isinstance(node, list):
        return [_convert(v) for v in node]
    return node


def _operation(path: str, method: str) -> dict:
    for template, item in openapi()["paths"].items():
        pattern = (
            "^"
            + re.sub(
                r"\{[^}]+\}", r"[^/]+", re.escape(template).replace(r"\{", "{").replace(r"\}", "}")
            )
            + "$"
        )
        if re.match(pattern, path):
            return item[method.lower()]
    raise AssertionError(f"{path} is not in the schema")


def assert_matches_schema(response, method: str = "get") -> None:
    """The response's status is documented and its JSON body matches the documented schema."""
    path = response.request["PATH_INFO"]
    operation = _operation(path, method)
    documented = operation["responses"]
    status = str(response.status_code)
    assert status in documented, f"{path}: status {status} not documented ({list(documented)})"
    content = documented[status].get("content", {})
    if "application/json" not in content:
        return
    schema = _convert(content["application/json"]["schema"])
    schema["$defs"] = {k: _convert(v) for k, v in openapi()["components"]["schemas"].items()}
    jsonschema.validate(response.json(), schema, cls=jsonschema.Draft202012Validator)


def operation_security(path: str, method: str = "get") -> list:
    return _operation(path, method).get("security", [])
