"""Versioned prompt files, all in one folder, ``kg/prompts/<task>.<lang>.txt`` (lang ``en`` or ``zh``), and their
rendering into chat messages (:func:`render`, what ``LLM.run`` sends).

File format: the first line is ``# version: N`` (part of the cache key); the rest is the template. A line
``[user]`` splits it into a system part (before) and a user part (after); without it the whole template is
the user message. Templates use ``str.format`` named fields (write literal braces as ``{{`` and ``}}``).

>>> prompt = load_prompt("atomic_questions", "en")
>>> prompt.version >= 1 and "chunk" in prompt.fields
True
>>> messages = prompt.messages(chunk="Neo4j is a graph database.", title="Neo4j")
>>> [m["role"] for m in messages]
['system', 'user']
>>> rendered = render("atomic_questions", {"chunk": "Neo4j 是一个图数据库。", "title": "Neo4j"})
>>> rendered.lang, rendered.version == load_prompt("atomic_questions", "zh").version
('zh', True)
"""

from __future__ import annotations

import functools
import re
import string
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from kg.errors import ConfigError
from kg.shared.text import detect_language

__all__ = ["PROMPTS_DIR", "Message", "Prompt", "Rendered", "available_prompts", "load_prompt", "prompt_for", "render"]

Message = dict[str, str]
"""A chat message: ``{"role": "system" | "user" | "assistant", "content": "..."}``."""

PROMPTS_DIR = Path(str(resources.files("kg") / "prompts"))
_VERSION = re.compile(r"^#\s*version:\s*(\d+)\s*$")
_SPLIT = re.compile(r"^\[user\]\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Prompt:
    """A loaded prompt template: ``text`` (without the version line), ``version``, ``task`` and ``lang``."""

    text: str
    version: int
    task: str = ""
    lang: str = "en"

    @property
    def fields(self) -> set[str]:
        """The named fields the template expects."""
        return {name for _, name, _, _ in string.Formatter().parse(self.text) if name}

    def render(self, **fields: Any) -> str:
        """The whole template filled in (KeyError names a missing field)."""
        return self.text.format(**fields)

    def messages(self, **fields: Any) -> list[Message]:
        """Chat messages: the system part (if any) and the user part, filled in."""
        parts = _SPLIT.split(self.text, maxsplit=1)
        if len(parts) == 2:
            system, user = (p.strip().format(**fields) for p in parts)
            return [{"role": "system", "content": system}, {"role": "user", "content": user}]
        return [{"role": "user", "content": self.text.strip().format(**fields)}]


@functools.lru_cache(maxsize=256)
def _load(task: str, lang: str, folder: str) -> Prompt:
    path = Path(folder) / f"{task}.{lang}.txt"
    if not path.is_file():
        fallback = Path(folder) / f"{task}.en.txt"
        if lang != "en" and fallback.is_file():
            path = fallback
        else:
            raise ConfigError(f"no prompt for task {task!r} ({lang}) in {folder}")
    raw = path.read_text(encoding="utf-8")
    first, _, rest = raw.partition("\n")
    match = _VERSION.match(first.strip())
    if match is None:
        raise ConfigError(f"prompt {path} must start with a '# version: N' line")
    return Prompt(text=rest, version=int(match.group(1)), task=task, lang=path.name.split(".")[-2])


def load_prompt(task: str, lang: str = "en", *, folder: Path | None = None) -> Prompt:
    """The prompt of ``task`` in ``lang`` (falls back to English when no translation exists)."""
    return _load(task, lang, str(folder or PROMPTS_DIR))


def prompt_for(task: str, sample_text: str, *, folder: Path | None = None) -> Prompt:
    """The prompt of ``task`` in the language detected in ``sample_text``."""
    lang: Literal["en", "zh"] = detect_language(sample_text)
    return load_prompt(task, lang, folder=folder)


@dataclass(frozen=True)
class Rendered:
    """A prompt filled in: its chat ``messages``, the prompt's ``version`` (part of the cache key) and ``lang``."""

    messages: list[Message]
    version: int
    lang: str


def render(prompt: str, fields: Mapping[str, Any], *, lang: str | None = None, folder: Path | None = None) -> Rendered:
    """The prompt ``prompt`` (a file stem) in ``lang`` filled in with ``fields``.

    ``lang`` defaults to the language detected in the joined field values.
    """
    chosen = lang or detect_language(" ".join(str(v) for v in fields.values()))
    loaded = load_prompt(prompt, chosen, folder=folder)
    return Rendered(loaded.messages(**fields), loaded.version, loaded.lang)


def available_prompts(folder: Path | None = None) -> dict[str, list[str]]:
    """``{task: [langs]}`` of the prompt files present."""
    out: dict[str, list[str]] = {}
    for path in sorted((folder or PROMPTS_DIR).glob("*.*.txt")):
        task, lang, _ = path.name.rsplit(".", 2)
        out.setdefault(task, []).append(lang)
    return out
