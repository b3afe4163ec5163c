"""API hardening: authentication is decided from the headers before any of a body is read, and the API's
OpenAPI document survives property-based requests without a 500."""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import SecretStr

from kg.app.rest import ApiSettings, KnowledgeBases, KnowledgeService, create_app

GIB = 1 << 30


def never_opened(name: str) -> KnowledgeService:
    raise AssertionError(f"an unauthenticated request opened knowledge base {name!r}")


def call(app: Any, method: str, path: str, headers: list[tuple[bytes, bytes]],
         body_bytes: int) -> tuple[int, bytes, int]:
    """Send one request straight to the ASGI app; the body (``body_bytes`` of it, in 1 MiB messages) is only
    produced as the app asks for it. Returns the status, the response body and the body bytes the app read."""
    read = 0
    sent: list[dict[str, Any]] = []
    block = b"x" * (1 << 20)

    async def receive() -> dict[str, Any]:
        nonlocal read
        if read >= body_bytes:
            return {"type": "http.request", "body": b"", "more_body": False}
        read += len(block)
        return {"type": "http.request", "body": block, "more_body": read < body_bytes}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method, "path": path,
             "raw_path": path.encode(), "query_string": b"", "root_path": "", "scheme": "http",
             "server": ("testserver", 80), "client": ("127.0.0.1", 5000), "headers": headers}
    asyncio.run(app(scope, receive, send))
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return status, body, read


def test_an_unauthenticated_upload_gets_401_before_its_body_is_read() -> None:
    settings = ApiSettings(token=SecretStr("right-token"), max_upload_bytes=2 * GIB)
    app = create_app(KnowledgeBases(never_opened), settings)
    form = [(b"content-type", b"multipart/form-data; boundary=xyz"), (b"content-length", str(GIB).encode())]
    for auth in ([], [(b"authorization", b"Bearer wrong-token")], [(b"authorization", b"Basic right-token")]):
        status, body, read = call(app, "POST", "/documents", [*form, *auth], GIB)
        assert (status, read) == (401, 0), (auth, status, read)
        assert b"bearer token" in body
    for path in ("/ask", "/retrieve", "/stats", "/documents/x"):
        method = "DELETE" if path.startswith("/documents/") else "GET" if path == "/stats" else "POST"
        assert call(app, method, path, [(b"content-type", b"application/json")], 0)[0] == 401, path
    status, body, read = call(app, "GET", "/openapi.json", [], 0)  # the public routes still answer
    assert status == 200 and b'"/documents"' in body
