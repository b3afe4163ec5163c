"""The LLM interface every Strata component calls, and the offline marker.

``make_llm`` (in :mod:`kg.llm`) returns an :class:`OfflineLLM` when no endpoint is configured; callers test
``llm.offline`` and degrade (e.g. skip atomizing) instead of calling it. Calling any task on it raises
:class:`~kg.errors.ConfigError` naming ``STRATA_LLM_BASE_URL``.

>>> llm = OfflineLLM()
>>> llm.offline
True
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, TypeVar

from pydantic import BaseModel

from kg.errors import ConfigError
from kg.llm.accounting import Accounting

__all__ = ["LLM", "Message", "OfflineLLM", "T_Model"]

Message = dict[str, str]
"""A chat message: ``{"role": "system" | "user" | "assistant", "content": "..."}``."""

T_Model = TypeVar("T_Model", bound=BaseModel)


class LLM(ABC):
    """A chat model that completes tasks into text or into a validated pydantic model.

    ``task`` names the job (``"atomic_questions"``, ``"answer"``, ...): it selects per-task model overrides,
    is the JSON-schema name sent to the endpoint and the key of the accounting breakdown.
    """

    offline: bool = False
    accounting: Accounting

    @abstractmethod
    async def acomplete_structured(
        self, task: str, messages: Sequence[Message], schema: type[T_Model], **overrides: Any
    ) -> T_Model:
        """Complete ``messages`` into an instance of ``schema`` (validated, repaired once if needed)."""

    @abstractmethod
    async def acomplete_text(self, task: str, messages: Sequence[Message], **overrides: Any) -> str:
        """Complete ``messages`` into plain text."""

    @abstractmethod
    def complete_structured(
        self, task: str, messages: Sequence[Message], schema: type[T_Model], **overrides: Any
    ) -> T_Model:
        """Blocking :meth:`acomplete_structured`."""

    @abstractmethod
    def complete_text(self, task: str, messages: Sequence[Message], **overrides: Any) -> str:
        """Blocking :meth:`acomplete_text`."""

    async def acomplete_task(self, task: str, *, lang: str | None = None, **fields: Any) -> BaseModel:
        """Render ``kg/prompts/<task>.<lang>.txt`` with ``fields`` and complete it into the task's schema.

        ``lang`` defaults to the language detected in the joined field values; the prompt's version is part
        of the cache key. Example: ``await llm.acomplete_task("atomic_questions", title=t, chunk=c)``.
        """
        from kg.llm.prompts import load_prompt
        from kg.llm.schemas import schema_for
        from kg.shared.text import detect_language

        chosen = lang or detect_language(" ".join(str(v) for v in fields.values()))
        prompt = load_prompt(task, chosen)
        return await self.acomplete_structured(
            task, prompt.messages(**fields), schema_for(task), prompt_version=prompt.version
        )

    def complete_task(self, task: str, *, lang: str | None = None, **fields: Any) -> BaseModel:
        """Blocking :meth:`acomplete_task`."""
        from kg.llm.prompts import load_prompt
        from kg.llm.schemas import schema_for
        from kg.shared.text import detect_language

        chosen = lang or detect_language(" ".join(str(v) for v in fields.values()))
        prompt = load_prompt(task, chosen)
        return self.complete_structured(
            task, prompt.messages(**fields), schema_for(task), prompt_version=prompt.version
        )

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release connections and background threads."""

    def __enter__(self) -> LLM:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _offline_error(task: str) -> ConfigError:
    return ConfigError(
        f"task {task!r} needs an LLM but none is configured: set STRATA_LLM_BASE_URL "
        "(and STRATA_LLM_MODEL, STRATA_LLM_API_KEY) to an OpenAI-compatible endpoint"
    )


class OfflineLLM(LLM):
    """The marker returned when ``LLMSettings.base_url`` is None: ``offline`` is True, every call raises."""

    offline = True

    def __init__(self, accounting: Accounting | None = None) -> None:
        self.accounting = accounting or Accounting(offline=True)
        if self.accounting.model is None:
            self.accounting.offline = True

    async def acomplete_structured(
        self, task: str, messages: Sequence[Message], schema: type[T_Model], **overrides: Any
    ) -> T_Model:
        raise _offline_error(task)

    async def acomplete_text(self, task: str, messages: Sequence[Message], **overrides: Any) -> str:
        raise _offline_error(task)

    def complete_structured(
        self, task: str, messages: Sequence[Message], schema: type[T_Model], **overrides: Any
    ) -> T_Model:
        raise _offline_error(task)

    def complete_text(self, task: str, messages: Sequence[Message], **overrides: Any) -> str:
        raise _offline_error(task)

    def __repr__(self) -> str:
        return "OfflineLLM()"
