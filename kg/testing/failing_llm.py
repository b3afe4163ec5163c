"""A fault-injecting HTTP transport for the OpenAI client: an in-process OpenAI-compatible chat endpoint, in
the manner of ``httpx.MockTransport``, whose calls fail as a test says.

Faults are given per call number (1-based, ``faults={2: ...}``) or for every call (``always=...``); the other
calls get the good ``reply`` (a dict sent as JSON content, a string sent as the content, or a callable of the
request's JSON body returning either). A fault can be:

- :meth:`TransportFault.timeout` (the request times out: ``httpx.ReadTimeout``) or
  :meth:`TransportFault.disconnect` (the connection drops);
- :meth:`TransportFault.server_error` (HTTP 5xx) or :meth:`TransportFault.rate_limit` (HTTP 429, with
  ``Retry-After``);
- :meth:`TransportFault.malformed_body` (HTTP 200 whose body is not JSON);
- :meth:`TransportFault.malformed_reply` (a well-formed completion whose content is not the JSON asked for,
  so the client asks for a repair);
- :meth:`TransportFault.truncated` (a completion cut off at the token limit, ``finish_reason="length"``).

Every request's JSON body is kept in ``transport.requests``. Example::

    transport = FailingTransport({"questions": ["What is Neo4j?"]},
                                 faults={1: TransportFault.timeout(), 2: TransportFault.server_error(503)})
    llm = OpenAICompatibleLLM(LLMSettings(base_url=FailingTransport.BASE_URL, model="m"), transport=transport,
                              base_backoff_s=0.01)
    llm.run(ATOMIC_QUESTIONS, title="Neo4j", chunk="Neo4j is a graph database.")  # retried twice
    assert transport.calls == 3
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import httpx2

from kg.shared.text import estimate_tokens

__all__ = ["FailingTransport", "TransportFault"]

ReplyItem = str | dict[str, Any]
FaultKind = Literal["timeout", "disconnect", "status", "malformed_body", "malformed_reply", "truncated"]


@dataclass(frozen=True)
class TransportFault:
    """One injected failure (build it with the class methods)."""

    kind: FaultKind
    status: int = 500
    retry_after: str | None = None
    content: str = ""

    @classmethod
    def timeout(cls) -> TransportFault:
        """The request times out (the client sees ``openai.APITimeoutError``)."""
        return cls("timeout")

    @classmethod
    def disconnect(cls) -> TransportFault:
        """The server drops the connection (``openai.APIConnectionError``)."""
        return cls("disconnect")

    @classmethod
    def server_error(cls, status: int = 500) -> TransportFault:
        """HTTP ``status`` (5xx) with an error body."""
        return cls("status", status=status)

    @classmethod
    def rate_limit(cls, retry_after: float | str | None = 0) -> TransportFault:
        """HTTP 429 with ``Retry-After`` (seconds) when given."""
        return cls("status", status=429, retry_after=None if retry_after is None else str(retry_after))

    @classmethod
    def malformed_body(cls) -> TransportFault:
        """HTTP 200 whose body is cut-off JSON, not a chat completion."""
        return cls("malformed_body")

    @classmethod
    def malformed_reply(cls, content: str = '{"questions": ["What is') -> TransportFault:
        """A chat completion whose content is not valid JSON (``finish_reason="stop"``)."""
        return cls("malformed_reply", content=content)

    @classmethod
    def truncated(cls, content: str = '{"questions": ["What is Neo4j?", "Who') -> TransportFault:
        """A chat completion cut off at its token limit (``finish_reason="length"``)."""
        return cls("truncated", content=content)


class FailingTransport(httpx2.MockTransport):
    """``POST <BASE_URL>/chat/completions`` answered in-process: ``reply`` unless a fault is due.

    Args:
        reply: the good reply: a dict (sent as JSON content), a string (the content) or a callable of the
            request's JSON body returning one.
        faults: fault per call number (1-based, counted over every request of the transport).
        always: a fault for every call not in ``faults`` (e.g. an endpoint that stays down).
    """

    BASE_URL = "http://failing-llm.test/v1"

    def __init__(
        self,
        reply: ReplyItem | Callable[[dict[str, Any]], ReplyItem] = "",
        *,
        faults: Mapping[int, TransportFault] | None = None,
        always: TransportFault | None = None,
    ) -> None:
        super().__init__(self._handle)
        self.reply = reply
        self.faults = dict(faults or {})
        self.always = always
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    @property
    def calls(self) -> int:
        """Requests received so far."""
        return len(self.requests)

    def _handle(self, request: httpx2.Request) -> httpx2.Response:
        body: dict[str, Any] = json.loads(request.content or b"{}")
        with self._lock:
            self.requests.append(body)
            number = len(self.requests)
        if not request.url.path.endswith("/chat/completions"):
            return httpx2.Response(404, json={"error": {"message": f"no route {request.url.path}"}})
        fault = self.faults.get(number, self.always)
        if fault is None:
            item = self.reply(body) if callable(self.reply) else self.reply
            content = item if isinstance(item, str) else json.dumps(item, ensure_ascii=False)
            return _completion(body, content, "stop")
        if fault.kind == "timeout":
            raise httpx2.ReadTimeout("injected timeout", request=request)
        if fault.kind == "disconnect":
            raise httpx2.RemoteProtocolError("injected disconnect: server closed the connection", request=request)
        if fault.kind == "status":
            headers = {"Retry-After": fault.retry_after} if fault.retry_after is not None else {}
            return httpx2.Response(fault.status, headers=headers, json={"error": {
                "message": f"injected HTTP {fault.status}", "type": "server_error", "code": fault.status}})
        if fault.kind == "malformed_body":
            return httpx2.Response(200, headers={"content-type": "application/json"},
                                   content=b'{"id": "chatcmpl-1", "choices": [{"message": {"content": "')
        return _completion(body, fault.content, "length" if fault.kind == "truncated" else "stop")


def _completion(body: Mapping[str, Any], content: str, finish_reason: str) -> httpx2.Response:
    prompt = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
    usage = {"prompt_tokens": estimate_tokens(prompt), "completion_tokens": estimate_tokens(content)}
    usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    return httpx2.Response(200, json={
        "id": "chatcmpl-failing", "object": "chat.completion", "created": 0, "model": body.get("model", "m"),
        "choices": [{"index": 0, "finish_reason": finish_reason,
                     "message": {"role": "assistant", "content": content}}],
        "usage": usage,
    })
