"""An LLM client for any OpenAI-compatible chat endpoint (OpenAI, Azure OpenAI v1, vLLM, Ollama, LM Studio,
DeepSeek, Qwen/DashScope), with structured outputs, retries, a persistent cache, accounting and a budget.

Example::

    from kg.llm import OpenAICompatibleLLM, AtomicQuestions
    from kg.settings import LLMSettings

    settings = LLMSettings(base_url="http://localhost:11434/v1", model="qwen2.5:7b",
                           task_models={"atomic_questions": "qwen2.5:3b"})
    with OpenAICompatibleLLM(settings, cache_dir=Path("~/.cache/strata").expanduser()) as llm:
        out = llm.complete_structured("atomic_questions", messages, AtomicQuestions)
        print(out.questions, llm.accounting.to_json())

Structured outputs use the form ``LLMSettings.response_format`` names, or with ``auto`` the strongest form
the endpoint accepts, negotiated and remembered per endpoint and model (:mod:`kg.llm.negotiation`). Replies
are read leniently (:func:`~kg.llm.structured.parse_reply`: code fences, prose, invalid list items dropped);
a reply cut off at its token budget (``finish_reason == "length"``) is never read as complete: the model is
asked once for a shorter reply, then :class:`~kg.errors.LLMTruncatedError` is raised so the caller can split
its input. An invalid reply is sent back once with the error for repair, then :class:`LLMOutputError`.
Every task has its own output budget (``Task.output_tokens``, which ``run`` sends as the ``output_tokens``
override, else :func:`~kg.llm.tasks.output_budget` of the task's name), fitted into the endpoint's
context window when it is known.

Each request carries the header ``X-Strata-Task: <task>`` (ignored by real endpoints; the scripted test
server keys json_object/text requests by it).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import weakref
from collections.abc import Coroutine, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import openai
from pydantic import ValidationError

from kg.errors import ConfigError, LLMError, LLMOutputError, LLMTruncatedError, LLMUnavailableError
from kg.llm.accounting import Accounting
from kg.llm.base import LLM, Message, T_Model
from kg.llm.negotiation import ResponseFormats
from kg.llm.structured import (
    Parsed,
    ResponseMode,
    format_instructions,
    parse_reply,
    refuses_format,
    response_format_for,
)
from kg.llm.tasks import output_budget
from kg.llm.usage_history import UsageHistory
from kg.settings import LLMSettings, ResponseFormat
from kg.shared.concurrency import shared_limit
from kg.shared.response_cache import ResponseCache, cache_key
from kg.shared.retrying import RetryPolicy, retry_async
from kg.shared.text import estimate_messages_tokens

if TYPE_CHECKING:
    import httpx2  # the HTTP library under the openai client

__all__ = ["OpenAICompatibleLLM"]

log = logging.getLogger(__name__)
R = TypeVar("R")

_OVERRIDE_KEYS = {
    "model", "temperature", "max_tokens", "output_tokens", "timeout_s", "response_format", "prompt_version", "sample",
}
_EXCERPT = 200
# Room left for the estimate's error when a prompt and its output budget are fitted into the context.
_CONTEXT_MARGIN = 64
_MIN_OUTPUT_TOKENS = 48


class _FormatRefused(Exception):
    """The endpoint refused the request's response_format (not an openai error: never retried)."""

    def __init__(self, status: int, message: str) -> None:
        self.status = status
        super().__init__(f"HTTP {status}: {message[:300]}")


@dataclass(frozen=True)
class _Params:
    model: str
    temperature: float
    max_tokens: int
    timeout_s: float
    mode: ResponseFormat
    prompt_version: int | None
    # Which of several independent samples of the same request: each is its own cache entry, so sampling
    # at temperature > 0 draws afresh per sample and a re-run replays the same draws.
    sample: int | None


class _LoopThread:
    """A private event loop in a daemon thread, for the blocking API."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="strata-llm-loop", daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, R]) -> R:
        future: Future[R] = asyncio.run_coroutine_threadsafe(coro, self.loop)
        return future.result()

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=5)
        if not self.loop.is_running():
            self.loop.close()


class OpenAICompatibleLLM(LLM):
    """Chat completions against an OpenAI-compatible endpoint. See the module docstring for an example.

    Args:
        settings: endpoint, model, key, temperature, max tokens, timeout, retries, concurrency, response
            format, per-task models (``task_models``), cache switch and price table.
        cache_dir: folder of the response cache (``<cache_dir>/llm/responses.sqlite``); None disables it.
        accounting: the job's :class:`Accounting` (shared across clients of a job); a new one by default.
        budget_tokens: token budget of the job (sets ``accounting.budget_tokens`` when given).
        base_backoff_s, max_backoff_s: retry backoff bounds (small values in tests).
        transport: the HTTP transport under the OpenAI client (default: the network). Tests inject faults
            here, e.g. :class:`kg.testing.FailingTransport`.
    """

    def __init__(
        self,
        settings: LLMSettings,
        *,
        cache_dir: Path | None = None,
        accounting: Accounting | None = None,
        budget_tokens: int | None = None,
        base_backoff_s: float = 0.5,
        max_backoff_s: float = 30.0,
        transport: httpx2.AsyncBaseTransport | None = None,
    ) -> None:
        if settings.base_url is None:
            from kg.llm.base import _offline_error

            raise _offline_error("<client>")
        self.settings = settings
        self.base_url: str = settings.base_url
        self.accounting = accounting or Accounting(prices_per_mtok=settings.prices_per_mtok, model=settings.model)
        if not self.accounting.prices_per_mtok:
            self.accounting.prices_per_mtok = dict(settings.prices_per_mtok)
        if self.accounting.model is None:  # a job's accounting names the first client's model
            self.accounting.model = settings.model
        if budget_tokens is not None:
            self.accounting.budget_tokens = budget_tokens
        if settings.is_local:
            raise ConfigError("STRATA_LLM_BASE_URL=local: resolve the local server first (kg.llm.make_llm does)")
        self.policy = RetryPolicy(
            max_retries=settings.max_retries, base_backoff_s=base_backoff_s, max_backoff_s=max_backoff_s,
            retry_timeouts=settings.retry_timeouts,
        )
        self.limit = shared_limit(self.base_url, settings.max_concurrency)
        self.cache: ResponseCache | None = None
        if settings.cache and cache_dir is not None:
            self.cache = ResponseCache.named(Path(cache_dir), "llm")
        self.formats = ResponseFormats(Path(cache_dir) / "llm" if cache_dir is not None else None)
        self.history = UsageHistory.under(Path(cache_dir)) if cache_dir is not None else None
        if settings.response_format != "auto":
            self.accounting.response_format = settings.response_format
        elif (found := self.formats.known(self.base_url, settings.model)) is not None:
            self.accounting.response_format = found
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, openai.AsyncOpenAI] = (
            weakref.WeakKeyDictionary()
        )
        self._clients_lock = threading.Lock()
        self._loop_thread: _LoopThread | None = None
        self._transport = transport

    def __repr__(self) -> str:
        return f"OpenAICompatibleLLM(base_url={self.base_url!r}, model={self.settings.model!r})"

    # -- plumbing -----------------------------------------------------------------------------------------

    def _client(self) -> openai.AsyncOpenAI:
        loop = asyncio.get_running_loop()
        with self._clients_lock:
            client = self._clients.get(loop)
            if client is None:
                client = openai.AsyncOpenAI(
                    base_url=self.base_url,
                    api_key=self.settings.api_key.get_secret_value() or "not-needed",
                    timeout=self.settings.timeout_s,
                    max_retries=0,  # ours are the only retries
                    http_client=(openai.DefaultAsyncHttpxClient(transport=self._transport)
                                 if self._transport is not None else None),
                )
                self._clients[loop] = client
            return client

    def _run(self, coro: Coroutine[Any, Any, R]) -> R:
        if self._loop_thread is None:
            with self._clients_lock:
                if self._loop_thread is None:
                    self._loop_thread = _LoopThread()
        return self._loop_thread.run(coro)

    def close(self) -> None:
        """Close the HTTP clients, the blocking API's loop thread and the cache connection."""
        if self._loop_thread is not None:
            client = self._clients.get(self._loop_thread.loop)
            if client is not None:
                asyncio.run_coroutine_threadsafe(client.close(), self._loop_thread.loop).result(timeout=5)
            self._loop_thread.stop()
            self._loop_thread = None
        self._clients = weakref.WeakKeyDictionary()
        if self.cache is not None:
            self.cache.close()
        if self.history is not None:
            self.history.close()

    def clear(self) -> None:
        """Empty the response cache."""
        if self.cache is not None:
            self.cache.clear()

    def _params(self, task: str, overrides: dict[str, Any]) -> _Params:
        unknown = set(overrides) - _OVERRIDE_KEYS
        if unknown:
            raise TypeError(f"unknown override(s): {sorted(unknown)}")
        s = self.settings
        return _Params(
            model=overrides.get("model") or s.task_models.get(task) or s.model,
            temperature=float(overrides.get("temperature", s.temperature)),
            max_tokens=int(overrides.get("max_tokens")
                           or output_budget(task, s.max_tokens, own=overrides.get("output_tokens"))),
            timeout_s=float(overrides.get("timeout_s", s.timeout_s)),
            mode=overrides.get("response_format", s.response_format),
            prompt_version=overrides.get("prompt_version"),
            sample=overrides.get("sample"),
        )

    def _key(self, kind: str, task: str, messages: Sequence[Message], p: _Params, schema: Any) -> str:
        return cache_key(
            {
                "kind": kind,
                "endpoint": self.base_url,
                "model": p.model,
                "task": task,
                "messages": list(messages),
                "temperature": p.temperature,
                "max_tokens": p.max_tokens,
                "mode": p.mode,
                "schema": schema,
                "prompt_version": p.prompt_version,
                "sample": p.sample,
            }
        )

    async def _call(
        self, task: str, messages: Sequence[Message], p: _Params, response_format: dict[str, Any] | None
    ) -> tuple[str, str | None]:
        """One real request (with retries): returns (content, finish_reason) and records usage.

        Raises _FormatRefused when the endpoint refuses ``response_format`` (the caller steps down a form).
        """
        client = self._client()
        max_tokens = self._fit(task, messages, p.max_tokens)
        kwargs: dict[str, Any] = {
            "model": p.model,
            "messages": list(messages),
            "temperature": p.temperature,
            "max_tokens": max_tokens,
            "timeout": p.timeout_s,
            "extra_headers": {"X-Strata-Task": task},
        }
        if response_format is not None:
            kwargs["response_format"] = response_format
        if self.settings.seed is not None:
            # A seeded endpoint (llama.cpp) repeats its draw for the same prompt: each sample needs its own seed.
            kwargs["seed"] = self.settings.seed + (p.sample or 0)

        async def attempt() -> Any:
            async with self.limit.acquire_async():
                try:
                    return await client.chat.completions.create(**kwargs)
                except openai.APIStatusError as exc:
                    if response_format is not None and refuses_format(exc.status_code, str(exc)):
                        raise _FormatRefused(exc.status_code, str(exc)) from exc
                    raise
                except ValueError as exc:  # an HTTP 200 whose body is not JSON: the endpoint's fault, typed
                    raise LLMError(f"LLM task {task!r} ({p.model} at {self.base_url}): the endpoint's response "
                                   f"is not a JSON chat completion: {str(exc)[:200]}") from exc

        # Held before waiting for a concurrency slot, so calls in flight count against the budget.
        held = self.accounting.reserve(task, estimate_messages_tokens(messages), max_tokens)
        try:
            response = await retry_async(attempt, self.policy, what=f"LLM task {task!r} ({p.model} at {self.base_url})",
                                         exhausted=_unavailable)
        except BaseException:
            self.accounting.release(held)
            raise
        choice = response.choices[0] if response.choices else None
        content = (choice.message.content if choice is not None else None) or ""
        finish = choice.finish_reason if choice is not None else None
        usage = response.usage
        prompt_tokens = usage.prompt_tokens if usage is not None else estimate_messages_tokens(messages)
        completion_tokens = usage.completion_tokens if usage is not None else 0
        self.accounting.record(
            task, p.model, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens, reserved=held
        )
        if usage is not None and self.history is not None:  # what `load --estimate` predicts replies from
            self.history.record(p.model, task, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)
        log.debug(
            "llm call",
            extra={"task": task, "model": p.model, "prompt_tokens": prompt_tokens,
                   "completion_tokens": completion_tokens, "finish_reason": finish},
        )
        return content, finish

    # -- public API ---------------------------------------------------------------------------------------

    async def acomplete_text(self, task: str, messages: Sequence[Message], **overrides: Any) -> str:
        """Complete ``messages`` into text. Overrides: model, temperature, max_tokens, timeout_s,
        prompt_version and sample (both part of the cache key)."""
        p = self._params(task, overrides)
        key = self._key("text", task, messages, p, None)
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                self.accounting.record_cache_hit(task)
                return hit
        text, finish = await self._call(task, messages, p, None)
        if finish == "length":
            self.accounting.count(task, truncated=1)
            log.warning("llm output truncated", extra={"task": task, "model": p.model})
        elif self.cache is not None:
            self.cache.put(key, text)
        return text

    async def acomplete_structured(
        self, task: str, messages: Sequence[Message], schema: type[T_Model], **overrides: Any
    ) -> T_Model:
        """Complete ``messages`` into a validated ``schema`` instance.

        Overrides: model, temperature, max_tokens (or output_tokens: the task's own budget, capped by the
        setting), timeout_s, response_format, prompt_version, sample.
        Raises LLMOutputError (naming ``task``) when the output is still invalid after one repair.
        """
        p = self._params(task, overrides)
        key = self._key("structured", task, messages, p, schema.model_json_schema())
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                try:
                    cached = schema.model_validate_json(hit)
                except ValidationError:
                    pass  # schema changed shape: fall through to a real call
                else:
                    self.accounting.record_cache_hit(task)
                    return cached

        conversation = list(messages)
        text, finish = await self._send(task, conversation, p, schema)
        if finish == "length":
            self.accounting.count(task, truncated=1)
            conversation += [{"role": "assistant", "content": text[:_EXCERPT]}, _SHORTER]
            text, finish = await self._send(task, conversation, p, schema)
            if finish == "length":
                self.accounting.count(task, truncated=1, failed=1)
                raise LLMTruncatedError(task, f"the reply stopped at its limit of {p.max_tokens} tokens twice",
                                        text[:_EXCERPT])
        parsed = parse_reply(text, schema)
        if parsed.value is None:
            log.info("llm output invalid, repairing", extra={"task": task, "error": parsed.error[:200]})
            conversation += [{"role": "assistant", "content": text}, _repair_message(parsed.error)]
            text, finish = await self._send(task, conversation, p, schema)
            parsed = parse_reply(text, schema) if finish != "length" else Parsed(
                None, f"the repaired reply stopped at its limit of {p.max_tokens} tokens")
            if parsed.value is None:
                self.accounting.count(task, failed=1, truncated=int(finish == "length"))
                raise LLMOutputError(task, f"invalid output after one repair: {parsed.error[:300]}", text[:_EXCERPT])
            self.accounting.count(task, repaired=1)
        if parsed.dropped_items:
            self.accounting.count(task, invalid_items=parsed.dropped_items)
        result = parsed.value
        if self.cache is not None:
            self.cache.put(key, result.model_dump_json())
        return result

    async def _send(
        self, task: str, messages: Sequence[Message], p: _Params, schema: type[T_Model]
    ) -> tuple[str, str | None]:
        """One structured request in the endpoint's form, stepping down the forms it refuses (``auto``)."""
        while True:
            mode = self._mode(p)
            request = list(messages)
            if mode != "json_schema":
                request = _with_instructions(request, format_instructions(schema))
            try:
                reply = await self._call(task, request, p, response_format_for(mode, task, schema))
            except _FormatRefused as refused:
                if p.mode != "auto":
                    raise LLMError(
                        f"{self.base_url} refused response_format {mode!r} ({refused}); set "
                        "STRATA_LLM_RESPONSE_FORMAT=auto to find the form it accepts") from refused
                following = self.formats.step_down(self.base_url, p.model, mode)
                if following is None:
                    raise LLMError(f"{self.base_url} refused every structured-output form: {refused}") from refused
                continue
            if p.mode == "auto":
                self.formats.confirm(self.base_url, p.model, mode)
            self.accounting.response_format = mode
            return reply

    def _mode(self, p: _Params) -> ResponseMode:
        return self.formats.get(self.base_url, p.model) if p.mode == "auto" else p.mode

    def _fit(self, task: str, messages: Sequence[Message], max_tokens: int) -> int:
        """``max_tokens``, lowered so the prompt and the reply fit the endpoint's context window when known."""
        window = self.settings.context_tokens
        if window is None:
            return max_tokens
        room = window - estimate_messages_tokens(messages) - _CONTEXT_MARGIN
        if room < _MIN_OUTPUT_TOKENS:
            raise LLMOutputError(task, f"the prompt does not fit the model's context of {window} tokens "
                                 f"(about {window - room - _CONTEXT_MARGIN} prompt tokens)", "")
        return min(max_tokens, room)

    def complete_text(self, task: str, messages: Sequence[Message], **overrides: Any) -> str:
        """Blocking :meth:`acomplete_text` (works whether or not the caller's thread runs a loop)."""
        return self._run(self.acomplete_text(task, messages, **overrides))

    def complete_structured(
        self, task: str, messages: Sequence[Message], schema: type[T_Model], **overrides: Any
    ) -> T_Model:
        """Blocking :meth:`acomplete_structured` (works whether or not the caller's thread runs a loop)."""
        return self._run(self.acomplete_structured(task, messages, schema, **overrides))


def _with_instructions(messages: list[Message], instructions: str) -> list[Message]:
    if messages and messages[0].get("role") == "system":
        first = dict(messages[0])
        first["content"] = f"{first.get('content', '')}\n\n{instructions}"
        return [first, *messages[1:]]
    return [{"role": "system", "content": instructions}, *messages]


def _unavailable(message: str) -> LLMUnavailableError:
    return LLMUnavailableError(
        f"{message}. Is the endpoint up and STRATA_LLM_BASE_URL right? (the local server: `strata llm status`; "
        "a slow one: raise STRATA_LLM_TIMEOUT)")


_SHORTER: Message = {
    "role": "user",
    "content": ("Your reply was cut off at the length limit. Reply again with a shorter JSON object: "
                "at most 5 items in any list, each string short."),
}


def _repair_message(error: str) -> Message:
    return {
        "role": "user",
        "content": (
            "Your previous reply could not be used: "
            f"{error[:1000]}\n"
            "Reply again with only the corrected JSON object that satisfies the schema: no prose, "
            "no code fences, and keep it short enough to be complete."
        ),
    }
