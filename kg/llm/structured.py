"""Getting JSON out of model text: code-fence stripping, balanced-object extraction, response formats.

>>> extract_json('Sure! ```json\\n{"a": [1, {"b": "}"}]}\\n``` done')
'{"a": [1, {"b": "}"}]}'
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import BaseModel

__all__ = ["ResponseMode", "extract_json", "format_instructions", "response_format_for", "schema_name"]

ResponseMode = Literal["json_schema", "json_object", "text"]

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)
_NAME_OK = re.compile(r"[^a-zA-Z0-9_-]")


def schema_name(task: str) -> str:
    """The JSON-schema ``name`` sent for ``task`` (the task name restricted to ``[a-zA-Z0-9_-]``, <= 64)."""
    return _NAME_OK.sub("_", task)[:64] or "output"


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


def extract_json(text: str) -> str | None:
    """The first JSON object found in ``text`` (fenced blocks first), or None.

    Tries, in order: the whole text, each fenced code block, then the first balanced ``{...}`` that parses.
    """
    stripped = text.strip()
    candidates = [stripped, *(m.group(1).strip() for m in _FENCE.finditer(text))]
    for candidate in candidates:
        if candidate.startswith("{"):
            try:
                json.loads(candidate)
                return candidate
            except ValueError:
                pass
    for source in candidates:
        for i, ch in enumerate(source):
            if ch != "{":
                continue
            block = _balanced(source, i)
            if block is None:
                continue
            try:
                json.loads(block)
                return block
            except ValueError:
                continue
    return None


def response_format_for(mode: ResponseMode, task: str, schema: type[BaseModel]) -> dict[str, Any] | None:
    """The ``response_format`` request parameter for ``mode`` (None for plain text)."""
    if mode == "json_schema":
        return {
            "type": "json_schema",
            "json_schema": {"name": schema_name(task), "schema": schema.model_json_schema(), "strict": False},
        }
    if mode == "json_object":
        return {"type": "json_object"}
    return None


def format_instructions(schema: type[BaseModel]) -> str:
    """A system-message suffix asking for one JSON object following ``schema`` (json_object/text modes)."""
    return (
        "Reply with one JSON object only, no prose and no code fences. It must validate against this "
        "JSON schema:\n" + json.dumps(schema.model_json_schema(), ensure_ascii=False, separators=(",", ":"))
    )
