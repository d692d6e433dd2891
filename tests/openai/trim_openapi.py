#!/usr/bin/env python3
"""Trim OpenAI's official OpenAPI description to the JSON Schema of one request body.

The stand-in OpenAI server of the integration tests validates every request body efix sends
against the output of this script, so the check follows the official contract rather than a
copy written by hand.

Usage (the description is `openapi.json` of the openai/openai-openapi repository):

    python3 tests/openai/trim_openapi.py path/to/openapi.json SOURCE_COMMIT \
        > tests/openai/chat-completions-request.schema.json

What the trim does, and nothing else:
- keeps `CreateChatCompletionRequest` and every schema it references, transitively, under
  `$defs` (references are rewritten from `#/components/schemas/X` to `#/$defs/X`);
- drops documentation-only keys (`description`, `title`, `example`, `examples`, `x-*`,
  `deprecated`) to keep the file small;
- turns the OpenAPI 3.0 keyword `nullable: true`, which the description still uses and which
  JSON Schema ignores, into its JSON Schema meaning (`null` is an accepted value).
"""

import json
import sys

ROOT = "CreateChatCompletionRequest"
PREFIX = "#/components/schemas/"
DOC_KEYS = {"description", "title", "example", "examples", "deprecated"}


def referenced(node, schemas, found):
    """Collect the names of the component schemas `node` references, transitively."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str) and value.startswith(PREFIX):
                name = value[len(PREFIX):]
                if name not in found:
                    found.add(name)
                    referenced(schemas[name], schemas, found)
            else:
                referenced(value, schemas, found)
    elif isinstance(node, list):
        for value in node:
            referenced(value, schemas, found)


def nullable(node):
    """`node` (already without `nullable`) widened so that `null` is accepted."""
    if "type" in node:
        types = node["type"] if isinstance(node["type"], list) else [node["type"]]
        if "null" not in types:
            node["type"] = types + ["null"]
        if "enum" in node and None not in node["enum"]:
            node["enum"] = node["enum"] + [None]
        return node
    return {"anyOf": [node, {"type": "null"}]}


def clean(node):
    """A copy of `node` with references rewritten, docs dropped and `nullable` resolved."""
    if isinstance(node, list):
        return [clean(value) for value in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key in DOC_KEYS or key.startswith("x-") or key == "nullable":
            continue
        if key == "$ref" and isinstance(value, str) and value.startswith(PREFIX):
            out[key] = "#/$defs/" + value[len(PREFIX):]
        elif key in ("properties", "patternProperties", "$defs"):
            out[key] = {name: clean(schema) for name, schema in value.items()}
        else:
            out[key] = clean(value)
    if node.get("nullable") is True:
        out = nullable(out)
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: trim_openapi.py OPENAPI_JSON SOURCE_COMMIT")
    with open(sys.argv[1], encoding="utf-8") as handle:
        spec = json.load(handle)
    schemas = spec["components"]["schemas"]
    found = {ROOT}
    referenced(schemas[ROOT], schemas, found)
    trimmed = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$comment": (
            f"{ROOT} from openai/openai-openapi openapi.json at commit {sys.argv[2]} "
            f"(OpenAPI {spec['openapi']}), trimmed by tests/openai/trim_openapi.py"
        ),
        "$ref": "#/$defs/" + ROOT,
        "$defs": {name: clean(schemas[name]) for name in sorted(found)},
    }
    json.dump(trimmed, sys.stdout, indent=1, sort_keys=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
