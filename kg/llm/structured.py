"""Getting JSON out of model text, and the structured-output forms an endpoint may accept.

Forms, strongest first (:data:`LADDER`): ``json_schema`` (OpenAI's, vLLM, LM Studio, llama-server),
``json_object_schema`` (``{"type": "json_object", "schema": ...}``: llama-cpp-python turns the schema into a
grammar), ``json_object`` (valid JSON, any shape) and ``text`` (nothing sent; the schema is in the prompt).
Every form but ``json_schema`` also shows the reply's shape in the prompt, as an example small models copy.

Replies are read leniently but never guessed: the JSON may sit in code fences or prose; a bare list is
accepted for a schema with one list field; list items that do not validate are dropped and counted.

>>> extract_json('Sure! ```json\\n{"a": [1, {"b": "}"}]}\\n``` done')
'{"a": [1, {"b": "}"}]}'
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar, get_args, get_origin

from pydantic import BaseModel, TypeAdapter, ValidationError

__all__ = [
    "LADDER", "Parsed", "ResponseMode", "extract_json", "format_instructions", "parse_reply", "refuses_format",
    "response_format_for", "schema_name", "schema_skeleton",
]

ResponseMode = Literal["json_schema", "json_object_schema", "json_object", "text"]
LADDER: tuple[ResponseMode, ...] = ("json_schema", "json_object_schema", "json_object", "text")

T = TypeVar("T", bound=BaseModel)

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)
_NAME_OK = re.compile(r"[^a-zA-Z0-9_-]")
# What an endpoint's error says when it is the response_format it cannot take (llama-cpp-python answers
# 500 "Input should be 'text' or 'json_object'"; OpenAI 400 "'response_format' of type 'json_schema' is not
# supported with this model"; others name the schema or grammar).
_FORMAT_WORDS = re.compile(r"response_format|response format|json_schema|json_object|schema|grammar|structured output",
                           re.IGNORECASE)


def schema_name(task: str) -> str:
    """The JSON-schema ``name`` sent for ``task`` (the task name restricted to ``[a-zA-Z0-9_-]``, <= 64)."""
    return _NAME_OK.sub("_", task)[:64] or "output"


def refuses_format(status: int, message: str) -> bool:
    """True when an HTTP error says the endpoint does not accept the request's response_format."""
    return status in (400, 422, 500, 501) and bool(_FORMAT_WORDS.search(message))


def _balanced(text: str, start: int) -> str | None:
    """The balanced JSON object or array starting at ``text[start]``, honouring strings and escapes."""
    opener = text[start]
    closer = "}" if opener == "{" else "]"
    depth = 0
    in_string = False
    escape = False
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"':
                in_string = False
            continue
        if ch == '"':
            in_string = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth == 0:
                return text[start : i + 1] if ch == closer else None
    return None


def _parses(candidate: str) -> bool:
    try:
        json.loads(candidate)
    except ValueError:
        return False
    return True


def extract_json(text: str, *, arrays: bool = False) -> str | None:
    """The first JSON object (or, with ``arrays``, object or array) found in ``text``, or None.

    Tries, in order: the whole text, each fenced code block, then the first balanced block that parses.
    """
    openers = "{[" if arrays else "{"
    stripped = text.strip()
    candidates = [stripped, *(m.group(1).strip() for m in _FENCE.finditer(text))]
    for candidate in candidates:
        if candidate[:1] in openers and _parses(candidate):
            return candidate
    for source in candidates:
        for i, ch in enumerate(source):
            if ch not in openers:
                continue
            block = _balanced(source, i)
            if block is not None and _parses(block):
                return block
    return None


def response_format_for(mode: ResponseMode, task: str, schema: type[BaseModel]) -> dict[str, Any] | None:
    """The ``response_format`` request parameter for ``mode`` (None for plain text)."""
    if mode == "json_schema":
        return {
            "type": "json_schema",
            "json_schema": {"name": schema_name(task), "schema": schema.model_json_schema(), "strict": False},
        }
    if mode == "json_object_schema":
        return {"type": "json_object", "schema": schema.model_json_schema()}
    if mode == "json_object":
        return {"type": "json_object"}
    return None


def schema_skeleton(schema: type[BaseModel]) -> str:
    """An example of the reply's shape, with the schema's field names: what small models follow best.

    >>> from kg.llm.schemas import Triples
    >>> schema_skeleton(Triples)
    '{"triples": [{"head": "...", "head_type": "...", "relation": "...", "tail": "...", "tail_type": "..."}]}'
    """
    root = schema.model_json_schema()
    defs = root.get("$defs", {})

    def example(node: dict[str, Any], depth: int) -> Any:
        if "$ref" in node:
            node = defs.get(node["$ref"].rsplit("/", 1)[-1], {})
        options = [o for o in node.get("anyOf", []) if o.get("type") != "null"]
        if options:
            node = options[0]
        kind = node.get("type")
        if kind == "object" or "properties" in node:
            if depth > 3:
                return {}
            props = node.get("properties")
            if props is None:
                extra = node.get("additionalProperties")
                return {"...": example(extra, depth + 1)} if isinstance(extra, dict) else {}
            return {name: example(sub, depth + 1) for name, sub in props.items()}
        if kind == "array":
            return [example(node.get("items", {}), depth + 1)] if depth <= 3 else []
        if "enum" in node:
            return "|".join(str(v) for v in node["enum"])
        return {"integer": 0, "number": 0.0, "boolean": False}.get(str(kind), "...")

    return json.dumps(example(root, 0), ensure_ascii=False)


def format_instructions(schema: type[BaseModel]) -> str:
    """A system-message suffix asking for one JSON object of the schema's shape (every form but json_schema)."""
    return ("Reply with one JSON object only: no prose, no code fences, no comments. Use exactly these field "
            f"names, in this shape:\n{schema_skeleton(schema)}")


@dataclass(frozen=True)
class Parsed(Generic[T]):
    """A reply read against a schema: the value (None when unusable), what was wrong, items dropped."""

    value: T | None
    error: str = ""
    dropped_items: int = 0


def _list_fields(schema: type[BaseModel]) -> dict[str, Any]:
    """``{field: item type}`` of the schema's ``list[...]`` fields."""
    out: dict[str, Any] = {}
    for name, info in schema.model_fields.items():
        if get_origin(info.annotation) is list:
            args = get_args(info.annotation)
            out[name] = args[0] if args else Any
    return out


def _describe(exc: ValidationError) -> str:
    problems = "; ".join(
        f"{'.'.join(str(x) for x in err['loc']) or '<root>'}: {err['msg']}" for err in exc.errors()[:5]
    )
    return f"the JSON does not match the schema: {problems}"


def parse_reply(text: str, schema: type[T]) -> Parsed[T]:
    """Read ``text`` as ``schema``: extract the JSON, wrap a bare list, drop list items that do not validate."""
    lists = _list_fields(schema)
    block = extract_json(text, arrays=len(lists) == 1)
    if block is None:
        return Parsed(None, "no JSON object found in the reply")
    data = json.loads(block)
    if isinstance(data, list):
        data = {next(iter(lists)): data}
    if not isinstance(data, dict):
        return Parsed(None, "the reply's JSON is not an object")
    try:
        return Parsed(schema.model_validate(data))
    except ValidationError as first:
        error = _describe(first)
    dropped = 0
    for name, item_type in lists.items():
        items = data.get(name)
        if not isinstance(items, list):
            continue
        adapter: TypeAdapter[Any] = TypeAdapter(item_type)
        kept = []
        for item in items:
            try:
                adapter.validate_python(item)
            except ValidationError:
                dropped += 1
            else:
                kept.append(item)
        data[name] = kept
    if dropped:
        try:
            return Parsed(schema.model_validate(data), dropped_items=dropped)
        except ValidationError as second:
            error = _describe(second)
    return Parsed(None, error)
