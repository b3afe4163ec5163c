"""The LLM interface every Strata component calls, and the offline marker.

``make_llm`` (in :mod:`kg.llm`) returns an :class:`OfflineLLM` when no endpoint is configured; a job tests
``llm.offline`` once and picks its offline strategies (e.g. statements instead of atomic questions) instead of
calling it. Calling any task on it raises :class:`~kg.errors.ConfigError` naming ``STRATA_LLM_BASE_URL``.

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
from kg.llm.prompts import Message, Rendered, render
from kg.llm.tasks import Task

__all__ = ["LLM", "Message", "OfflineLLM", "T_Model"]

T_Model = TypeVar("T_Model", bound=BaseModel)
T = TypeVar("T", bound=BaseModel)


class LLM(ABC):
    """A chat model that completes messages into text or into a validated pydantic model, and runs typed
    :class:`~kg.llm.tasks.Task` s (their prompts rendered by :func:`kg.llm.prompts.render`).

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

    async def arun(self, task: Task[T], /, *, lang: str | None = None, temperature: float | None = None,
                   sample: int | None = None, **fields: Any) -> T:
        """Render ``task``'s prompt with ``fields`` and complete it into the task's output model.

        ``lang`` defaults to the language detected in the joined field values; the prompt's version is part
        of the cache key. ``temperature`` overrides the configured one; ``sample`` picks one of several
        independent draws of the same request (each its own cache entry). Example:
        ``(await llm.arun(ATOMIC_QUESTIONS, title=t, chunk=c)).questions``.
        """
        rendered = render(task.prompt, fields, lang=lang)
        return await self.acomplete_structured(task.name, rendered.messages, task.schema,
                                               **_overrides(task, rendered, temperature, sample))

    def run(self, task: Task[T], /, *, lang: str | None = None, temperature: float | None = None,
            sample: int | None = None, **fields: Any) -> T:
        """Blocking :meth:`arun`: ``llm.run(ATOMIC_QUESTIONS, title=t, chunk=c).questions``."""
        rendered = render(task.prompt, fields, lang=lang)
        return self.complete_structured(task.name, rendered.messages, task.schema,
                                        **_overrides(task, rendered, temperature, sample))

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release connections and background threads."""

    def __enter__(self) -> LLM:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _overrides(task: Task[Any], rendered: Rendered, temperature: float | None, sample: int | None) -> dict[str, Any]:
    out: dict[str, Any] = {"prompt_version": rendered.version, "output_tokens": task.output_tokens}
    if temperature is not None:
        out["temperature"] = temperature
    if sample is not None:
        out["sample"] = sample
    return out


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
