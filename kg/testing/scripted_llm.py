"""A scripted OpenAI-compatible HTTP server for tests: real HTTP, real ``openai`` client, no monkeypatching.

Serves ``POST /v1/chat/completions`` (non-streaming) and ``POST /v1/embeddings``. Replies are scripted by
*task name*, found in this order:

1. ``response_format.json_schema.name`` of a json_schema request;
2. the ``X-Strata-Task`` request header (sent by :class:`kg.llm.OpenAICompatibleLLM` on every request, so
   json_object and text requests are keyed by task as well);
3. otherwise the task is ``"default"``.

A script item is a :class:`Reply`, a :class:`Fault`, a ``str`` (the reply content), a ``dict``/``list``
(serialised as JSON content) or a list of items (a *sequence*: consumed in order, the last one repeats).
Tasks with no script go to the *default handler*, a callable ``(request_body: dict) -> item``; without one
the server answers HTTP 400 naming the task.

Usage reported: ``prompt_tokens`` = :func:`kg.shared.text.estimate_tokens` of the request's message contents
joined by newlines, ``completion_tokens`` = the same of the reply content. Every request is recorded in
``server.requests`` (with the usage reported), and ``server.max_in_flight`` is the most concurrent requests
seen. Embeddings are :class:`kg.embeddings.hashing.HashingEmbedder` vectors of the requested ``dimensions``
(default ``embedding_dimensions``); script the task ``"embeddings"`` to inject faults there (any non-Fault
item means a normal response).

Example::

    with ScriptedLLMServer() as server:
        server.script("atomic_questions",
                      Fault.rate_limit(retry_after=1),
                      {"questions": ["What is Neo4j?"]})
        llm = OpenAICompatibleLLM(LLMSettings(base_url=server.base_url, model="m"))
        ...
        assert len(server.chat_requests("atomic_questions")) == 2

Command line (script file format below)::

    python -m kg.testing.scripted_llm --port 8089 --script script.json

``script.json``: ``{"responses": {"<task>": item or [items]}, "default": item, "embedding_dimensions": 64}``
where an item is a string (content), ``{"content": "...", "finish_reason": "length", "delay_s": 0.1}``,
``{"fault": "rate_limit" | "server_error" | "timeout" | "drop", "retry_after": "1", "status": 503,
"delay_s": 2}``, or any other JSON object (sent as JSON content).
"""

from __future__ import annotations

import argparse
import base64
import json
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Literal

import numpy as np

from kg.embeddings.hashing import HashingEmbedder
from kg.shared.text import estimate_tokens

__all__ = [
    "Fault",
    "Handler",
    "Item",
    "RecordedRequest",
    "Reply",
    "ScriptedLLMServer",
    "format_of",
    "main",
    "truncated",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Reply:
    """A successful chat completion: ``content``, ``finish_reason``, after ``delay_s`` seconds."""

    content: str
    finish_reason: str = "stop"
    delay_s: float = 0.0


@dataclass(frozen=True)
class Fault:
    """An injected failure. Build with :meth:`rate_limit`, :meth:`server_error`, :meth:`timeout`,
    :meth:`drop`."""

    kind: Literal["status", "timeout", "drop"]
    status: int = 500
    retry_after: str | None = None
    delay_s: float = 0.0

    @classmethod
    def rate_limit(cls, retry_after: float | str | None = 1) -> Fault:
        """HTTP 429 with ``Retry-After`` (seconds, or an HTTP date string; None for no header)."""
        value = None if retry_after is None else str(retry_after)
        return cls("status", 429, value)

    @classmethod
    def server_error(cls, status: int = 500) -> Fault:
        """HTTP ``status`` (5xx by default)."""
        return cls("status", status)

    @classmethod
    def timeout(cls, seconds: float = 2.0) -> Fault:
        """Sleep ``seconds`` (longer than the client's timeout) before answering."""
        return cls("timeout", delay_s=seconds)

    @classmethod
    def drop(cls) -> Fault:
        """Close the connection without sending a response."""
        return cls("drop")


def truncated(content: str) -> Reply:
    """A reply cut short: ``finish_reason="length"``."""
    return Reply(content, finish_reason="length")


Item = Reply | Fault | str | dict[str, Any] | list[Any]
Handler = Callable[[dict[str, Any]], Item]


@dataclass
class RecordedRequest:
    """One request the server received."""

    path: str
    task: str | None
    body: dict[str, Any]
    headers: dict[str, str]  # lower-case names
    status: int = 0
    usage: dict[str, int] | None = None
    started: float = 0.0
    finished: float = 0.0


def _to_reply(item: Any) -> Reply | Fault:
    if isinstance(item, (Reply, Fault)):
        return item
    if isinstance(item, str):
        return Reply(item)
    if isinstance(item, (dict, list)):
        return Reply(json.dumps(item, ensure_ascii=False))
    raise TypeError(f"not a script item: {item!r}")


def item_from_json(data: Any) -> Item:
    """A script item from its JSON form (see the module docstring)."""
    if isinstance(data, dict) and "fault" in data:
        kind = data["fault"]
        if kind == "rate_limit":
            return Fault.rate_limit(data.get("retry_after", 1))
        if kind == "server_error":
            return Fault.server_error(int(data.get("status", 500)))
        if kind == "timeout":
            return Fault.timeout(float(data.get("delay_s", 2.0)))
        if kind == "drop":
            return Fault.drop()
        raise ValueError(f"unknown fault {kind!r}")
    if isinstance(data, dict) and "content" in data:
        return Reply(str(data["content"]), data.get("finish_reason", "stop"), float(data.get("delay_s", 0)))
    if isinstance(data, (str, dict)):
        return data
    raise ValueError(f"not a script item: {data!r}")


class _Sequence:
    def __init__(self, items: Sequence[Item]) -> None:
        if not items:
            raise ValueError("a scripted sequence needs at least one item")
        self.items = list(items)
        self.index = 0

    def next(self) -> Item:
        item = self.items[min(self.index, len(self.items) - 1)]
        self.index += 1
        return item


class ScriptedLLMServer:
    """The server; start it with ``with ScriptedLLMServer() as server:`` or :meth:`start` / :meth:`stop`."""

    def __init__(
        self,
        responses: Mapping[str, Item | Sequence[Item]] | None = None,
        *,
        default: Handler | Item | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        embedding_dimensions: int = 64,
        accepted_formats: frozenset[str] | None = None,
    ) -> None:
        # The structured-output forms this endpoint accepts (None: all). A request in another form gets what
        # llama-cpp-python answers: HTTP 500 "Input should be 'text' or 'json_object'".
        self.accepted_formats = accepted_formats
        self.host = host
        self.port = port
        self.embedding_dimensions = embedding_dimensions
        self.requests: list[RecordedRequest] = []
        self.max_in_flight = 0
        self._in_flight = 0
        self._lock = threading.Lock()
        self._scripts: dict[str, _Sequence] = {}
        self._default: Handler | None = None
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        for name, items in (responses or {}).items():
            if isinstance(items, list):  # a sequence; wrap a JSON array payload in Reply(json.dumps(...))
                self.script(name, *items)
            else:
                self.script(name, items)  # type: ignore[arg-type]
        if default is not None:
            self.set_default(default)

    # -- scripting -----------------------------------------------------------------------------------------

    def script(self, task: str, *items: Item) -> None:
        """Reply to ``task`` with ``items`` in order (the last one repeats). Replaces any previous script."""
        with self._lock:
            self._scripts[task] = _Sequence(items)

    def set_default(self, handler: Handler | Item) -> None:
        """Reply to unscripted tasks with ``handler(request_body)`` (or always with one fixed item)."""
        if callable(handler):
            self._default = handler
        else:
            fixed = handler
            self._default = lambda _body: fixed

    def reset(self) -> None:
        """Forget scripts, the default handler, the request log and the in-flight maximum."""
        with self._lock:
            self._scripts.clear()
            self._default = None
            self.requests.clear()
            self.max_in_flight = 0

    def chat_requests(self, task: str | None = None) -> list[RecordedRequest]:
        """Chat-completion requests received (for ``task`` only when given)."""
        with self._lock:
            return [
                r for r in self.requests
                if r.path.endswith("/chat/completions") and (task is None or r.task == task)
            ]

    def reported_usage(self) -> dict[str, int]:
        """Sum of the usage the server reported in successful chat responses."""
        total = {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0}
        for r in self.chat_requests():
            if r.usage is not None:
                total["calls"] += 1
                total["prompt_tokens"] += r.usage["prompt_tokens"]
                total["completion_tokens"] += r.usage["completion_tokens"]
        return total

    # -- lifecycle -----------------------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1`` (after :meth:`start`)."""
        return f"http://{self.host}:{self.port}/v1"

    def start(self) -> ScriptedLLMServer:
        """Bind (port 0 picks a free port) and serve in a daemon thread."""
        server = self

        class _Handler(_RequestHandler):
            owner = server

        httpd = ThreadingHTTPServer((self.host, self.port), _Handler)
        httpd.daemon_threads = True
        httpd.block_on_close = False
        self._httpd = httpd
        self.port = int(httpd.server_address[1])
        self._thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="scripted-llm", daemon=True)
        self._thread.start()
        log.debug("scripted llm started", extra={"url": self.base_url})
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> ScriptedLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- request handling ----------------------------------------------------------------------------------

    def _next_item(self, task: str, body: dict[str, Any]) -> Item | None:
        with self._lock:
            seq = self._scripts.get(task)
            if seq is not None:
                return seq.next()
        if self._default is not None:
            return self._default(body)
        return None

    def _enter(self, record: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(record)
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)

    def _leave(self) -> None:
        with self._lock:
            self._in_flight -= 1


def format_of(body: dict[str, Any]) -> str:
    """The structured-output form of a chat request: json_schema, json_object_schema, json_object or text."""
    fmt = body.get("response_format")
    if not isinstance(fmt, dict) or fmt.get("type") in (None, "text"):
        return "text"
    if fmt.get("type") == "json_object":
        return "json_object_schema" if "schema" in fmt else "json_object"
    return str(fmt.get("type"))


def _task_of(body: dict[str, Any], headers: Mapping[str, str]) -> str:
    fmt = body.get("response_format")
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        name = (fmt.get("json_schema") or {}).get("name")
        if name:
            return str(name)
    for key, value in headers.items():
        if key.lower() == "x-strata-task" and value:
            return value
    return "default"


def _message_text(body: dict[str, Any]) -> str:
    parts: list[str] = []
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "\n".join(parts)


class _RequestHandler(BaseHTTPRequestHandler):
    owner: ScriptedLLMServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("scripted llm request", extra={"line": format % args})

    def _send_json(self, status: int, payload: Any, headers: Mapping[str, str] | None = None) -> None:
        data = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self._send_json(200, {"object": "list", "data": [{"id": "scripted", "object": "model"}]})
        else:
            self._send_json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            error = {"message": "request body is not JSON", "type": "invalid_request"}
            self._send_json(400, {"error": error})
            return
        headers = {k.lower(): v for k, v in self.headers.items()}
        path = self.path.rstrip("/")
        task = _task_of(body, headers) if path.endswith("/chat/completions") else None
        record = RecordedRequest(path=path, task=task, body=body, headers=headers, started=time.monotonic())
        self.owner._enter(record)
        try:
            if path.endswith("/chat/completions"):
                self._chat(record, body, task or "default")
            elif path.endswith("/embeddings"):
                self._embeddings(record, body)
            else:
                record.status = 404
                self._send_json(404, {"error": {"message": f"no route {path}", "type": "not_found"}})
        except (BrokenPipeError, ConnectionResetError):
            record.status = -1  # the client went away (e.g. it timed out)
        finally:
            record.finished = time.monotonic()
            self.owner._leave()

    def _fault(self, record: RecordedRequest, fault: Fault) -> None:
        if fault.kind == "drop":
            record.status = -1
            self.close_connection = True
            return
        if fault.kind == "timeout":
            time.sleep(fault.delay_s)
            record.status = 504
            self._send_json(504, {"error": {"message": "scripted timeout", "type": "timeout"}})
            return
        headers = {"Retry-After": fault.retry_after} if fault.retry_after is not None else {}
        record.status = fault.status
        kind = "rate_limit_exceeded" if fault.status == 429 else "server_error"
        error = {"message": f"scripted {fault.status}", "type": kind}
        self._send_json(fault.status, {"error": error}, headers)

    def _chat(self, record: RecordedRequest, body: dict[str, Any], task: str) -> None:
        accepted = self.owner.accepted_formats
        if accepted is not None and format_of(body) not in accepted:
            record.status = 500
            error = {"message": f"1 validation error: response_format.type: Input should be 'text' or 'json_object' "
                                f"(got {format_of(body)})", "type": "internal_server_error"}
            self._send_json(500, {"error": error})
            return
        item = self.owner._next_item(task, body)
        if item is None:
            record.status = 400
            self._send_json(400, {"error": {"message": f"scripted server: no script for task {task!r}",
                                            "type": "invalid_request_error"}})
            return
        reply = _to_reply(item)
        if isinstance(reply, Fault):
            self._fault(record, reply)
            return
        if reply.delay_s:
            time.sleep(reply.delay_s)
        usage = {
            "prompt_tokens": estimate_tokens(_message_text(body)),
            "completion_tokens": estimate_tokens(reply.content),
        }
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        payload = {
            "id": f"chatcmpl-scripted-{len(self.owner.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "scripted"),
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": reply.content},
                "finish_reason": reply.finish_reason,
                "logprobs": None,
            }],
            "usage": usage,
        }
        record.status = 200
        record.usage = usage
        self._send_json(200, payload)

    def _embeddings(self, record: RecordedRequest, body: dict[str, Any]) -> None:
        item = self.owner._next_item("embeddings", body) if "embeddings" in self.owner._scripts else None
        if isinstance(item, Fault):
            self._fault(record, item)
            return
        inputs = body.get("input")
        texts = [inputs] if isinstance(inputs, str) else [str(t) for t in (inputs or [])]
        dims = int(body.get("dimensions") or self.owner.embedding_dimensions)
        vectors = HashingEmbedder(dims).embed(texts)
        b64 = body.get("encoding_format") == "base64"
        data = [
            {
                "object": "embedding",
                "index": i,
                "embedding": (base64.b64encode(np.asarray(v, dtype="<f4").tobytes()).decode("ascii")
                              if b64 else [float(x) for x in v]),
            }
            for i, v in enumerate(vectors)
        ]
        tokens = sum(estimate_tokens(t) for t in texts)
        usage = {"prompt_tokens": tokens, "total_tokens": tokens}
        record.status = 200
        record.usage = usage
        self._send_json(200, {"object": "list", "data": data, "model": body.get("model", "scripted"),
                              "usage": usage})


def load_script(path: Path) -> ScriptedLLMServer:
    """A server configured from a JSON script file (see the module docstring)."""
    spec = json.loads(Path(path).read_text(encoding="utf-8"))
    server = ScriptedLLMServer(embedding_dimensions=int(spec.get("embedding_dimensions", 64)))
    for task, items in (spec.get("responses") or {}).items():
        seq = items if isinstance(items, list) else [items]
        server.script(task, *(item_from_json(i) for i in seq))
    if "default" in spec:
        server.set_default(item_from_json(spec["default"]))
    return server


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m kg.testing.scripted_llm --port N --script FILE``: serve until interrupted."""
    parser = argparse.ArgumentParser(description="Scripted OpenAI-compatible server for tests.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--script", type=Path, help="JSON script file")
    args = parser.parse_args(argv)
    server = load_script(args.script) if args.script else ScriptedLLMServer()
    server.host, server.port = args.host, args.port
    server.start()
    print(f"scripted LLM server listening on {server.base_url}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
