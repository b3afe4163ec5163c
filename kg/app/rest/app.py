"""Strata's REST API and web page (FastAPI), served by ``strata serve``.

Every knowledge-base route takes ``?kb=NAME``; without it the server's default knowledge base answers.
A server only opens the knowledge bases it was started with (``--kb`` and ``--allow-kb``), so a request
cannot make it provision new ones. Request bodies are limited in size (413 with the limit in the
message) and, when a token is configured, every route except ``/health``, the page and the OpenAPI docs
needs ``Authorization: Bearer <token>``: 401 otherwise, sent before a byte of the body is read. While
Neo4j is down a request answers 503 within ``ApiSettings.neo4j_wait_s`` (not the minute a batch load waits
for a restarting server), and ``/health`` says so.

Example::

    app = create_app(KnowledgeBases(lambda name: StrataService(Strata.connect(kb=name))), ApiSettings())
    uvicorn.run(app, host="127.0.0.1", port=8000)
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import shutil
import tempfile
import threading
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from importlib import resources
from pathlib import Path
from typing import Any

from fastapi import Depends, FastAPI, File, Form, HTTPException, Query, Request, UploadFile
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, ConfigDict, SecretStr
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from kg.app.client import DocumentInfo
from kg.app.rest.ports import KnowledgeService, ServiceFactory
from kg.app.rest.views import (
    AskRequest,
    AskResponse,
    RetrieveRequest,
    RetrieveResponse,
    StatsView,
    answer_view,
)
from kg.errors import ConfigError, Neo4jUnavailable, QueryError, ReasoningError, RetrievalError, StrataError
from kg.shared.private import owned_dir
from kg.shared.redaction import redact, remember
from kg.store.neo4j_store import retry_budget

__all__ = ["ApiSettings", "KnowledgeBases", "UnknownKnowledgeBase", "create_app"]

_KB_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")
_UNSAFE = re.compile(r"[^\w.\- ]")
_UPLOAD_CHUNK = 1 << 20
MAX_SKIP = 1_000_000_000  # paging past it is refused with 422, not sent to Neo4j as an out-of-range integer


class ApiSettings(BaseModel):
    """How the API serves: which knowledge bases, the optional token, the size limits."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    default_kb: str = "default"
    allowed_kbs: frozenset[str] = frozenset()
    token: SecretStr | None = None
    max_upload_bytes: int = 50 * 1024 * 1024
    max_body_bytes: int = 64 * 1024
    upload_dir: Path | None = None  # default: a private temporary folder per app (strata serve: <home>/uploads)
    # How long one request waits through Neo4j faults (a restart, a leader switch) before answering 503.
    neo4j_wait_s: float = 5.0

    @property
    def kbs(self) -> frozenset[str]:
        return self.allowed_kbs | {self.default_kb}


class RedactedJSONResponse(JSONResponse):
    """Every JSON body the API sends, secrets masked: answers, load reports and errors may quote an endpoint's
    reply (see :mod:`kg.shared.redaction`)."""

    def render(self, content: Any) -> bytes:
        try:
            text = super().render(content).decode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate echoed from the request: escaped, so still valid JSON
            text = json.dumps(content, ensure_ascii=True, separators=(",", ":"))
        return redact(text).encode("utf-8")


class UnknownKnowledgeBase(StrataError):
    """A request named a knowledge base this server does not serve."""


class KnowledgeBases:
    """One open service per knowledge base name, opened on first use and closed with the server."""

    def __init__(self, factory: ServiceFactory) -> None:
        self._factory = factory
        self._open: dict[str, KnowledgeService] = {}
        self._lock = threading.Lock()

    def get(self, name: str, allowed: frozenset[str]) -> KnowledgeService:
        if name not in allowed:
            raise UnknownKnowledgeBase(
                f"this server does not serve knowledge base {name!r}; it serves {sorted(allowed)}")
        with self._lock:
            if name not in self._open:
                self._open[name] = self._factory(name)
            return self._open[name]

    def opened(self) -> list[str]:
        with self._lock:
            return list(self._open)

    def close(self) -> None:
        with self._lock:
            for service in self._open.values():
                service.close()
            self._open.clear()


# Routes that need no token: liveness, the page and its assets, the OpenAPI document and its viewers.
_PUBLIC = frozenset({"/health", "/", "/docs", "/docs/oauth2-redirect", "/redoc", "/openapi.json"})


def _is_public(path: str) -> bool:
    return path in _PUBLIC or path.startswith("/static/")


class RequestGuard:
    """ASGI middleware in front of everything: checks the bearer token from the headers alone, so an
    unauthenticated request gets its 401 before any of its body is read (a 1 GB upload costs nothing), and
    runs the request under :func:`kg.store.neo4j_store.retry_budget`, so it fails fast with 503 while Neo4j is down.
    """

    def __init__(self, app: ASGIApp, *, token: SecretStr | None, wait_s: float) -> None:
        self.app = app
        self.expected = token.get_secret_value().encode() if token is not None else None
        self.wait_s = wait_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.expected is not None and not _is_public(scope.get("path", "")):
            header = dict(scope["headers"]).get(b"authorization", b"")
            scheme, _, given = header.partition(b" ")
            if scheme.lower() != b"bearer" or not hmac.compare_digest(given.strip(), self.expected):
                response = JSONResponse(status_code=401, content={"detail": "missing or wrong bearer token"},
                                        headers={"WWW-Authenticate": "Bearer", "Connection": "close"})
                await response(scope, _no_receive, send)
                return
        with retry_budget(self.wait_s):
            await self.app(scope, receive, send)


class _BodyTooLarge(Exception):
    pass


class BodyLimit:
    """ASGI middleware: refuse bodies over the limit, by Content-Length up front or while they stream in."""

    def __init__(self, app: ASGIApp, *, limit_of: Callable[[Scope], int]) -> None:
        self.app = app
        self.limit_of = limit_of

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit_of(scope)
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await _too_large(send, int(declared), limit)
            return
        seen = 0
        started = exceeded = False

        async def counted() -> Message:
            nonlocal seen, exceeded
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > limit:
                exceeded = True
                raise _BodyTooLarge
            return message

        async def tracked(message: Message) -> None:
            # Once the body overflowed, the app's own error response (FastAPI turns a failed form
            # parse into a 400) is replaced by the 413 below.
            nonlocal started
            if exceeded and not started:
                return
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted, tracked)
        except _BodyTooLarge:
            if started:
                raise
        if exceeded and not started:
            await _too_large(send, seen, limit)


async def _too_large(send: Send, size: int, limit: int) -> None:
    response = JSONResponse(status_code=413, content={
        "detail": f"request body too large: {size} bytes received, the limit is {limit} bytes "
                  "(raise it with strata serve --max-upload-mb)"})
    await response({"type": "http"}, _no_receive, send)


async def _no_receive() -> Message:
    return {"type": "http.disconnect"}


def create_app(kbs: KnowledgeBases, settings: ApiSettings) -> FastAPI:
    """The API over ``kbs``; closing the app (lifespan end) closes every knowledge base it opened."""

    upload_lock = threading.Lock()
    upload_root = settings.upload_dir

    def upload_folder(kb: str) -> Path:
        nonlocal upload_root
        if upload_root is None:  # made on first use: most apps never see an upload
            upload_root = Path(tempfile.mkdtemp(prefix="strata-uploads-"))
        return owned_dir(owned_dir(upload_root, "upload folder") / kb, "upload folder")

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        kbs.close()
        if settings.upload_dir is None and upload_root is not None:
            shutil.rmtree(upload_root, ignore_errors=True)

    if settings.token is not None:
        remember(settings.token.get_secret_value())
    api = FastAPI(
        title="Strata", version="0.1.0", lifespan=lifespan, default_response_class=RedactedJSONResponse,
        description="Cited answers over a three-layer knowledge graph in Neo4j. "
                    "Every knowledge-base route takes `?kb=NAME` (default: the server's knowledge base).",
    )
    bearer = HTTPBearer(auto_error=False)

    def authorised(credentials: HTTPAuthorizationCredentials | None = Depends(bearer)) -> None:
        if settings.token is None:
            return
        expected = settings.token.get_secret_value().encode()
        if credentials is None or not hmac.compare_digest(credentials.credentials.encode(), expected):
            raise HTTPException(401, "missing or wrong bearer token", headers={"WWW-Authenticate": "Bearer"})

    def service(kb: str | None = Query(None, description="Knowledge base name; default: the server's.")
                ) -> KnowledgeService:
        name = kb or settings.default_kb
        if not _KB_NAME.match(name):
            raise HTTPException(400, f"invalid knowledge base name {name!r}")
        try:
            return kbs.get(name, settings.kbs)
        except UnknownKnowledgeBase as exc:
            raise HTTPException(404, str(exc)) from exc

    guarded = [Depends(authorised)]

    @api.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        return RedactedJSONResponse(status_code=422, content={"detail": jsonable_encoder(exc.errors())})

    @api.exception_handler(Neo4jUnavailable)
    async def _unavailable(_: Request, exc: Neo4jUnavailable) -> JSONResponse:
        return RedactedJSONResponse(status_code=503, content={"detail": str(exc)})

    @api.exception_handler(StrataError)
    async def _failed(_: Request, exc: StrataError) -> JSONResponse:
        # Bad configuration or a bad request (an empty question, an unknown method, a question whose query
        # Neo4j refused) is the caller's to fix.
        client_side = isinstance(exc, ConfigError | RetrievalError | ReasoningError | QueryError)
        return RedactedJSONResponse(status_code=400 if client_side else 500, content={"detail": str(exc)})

    @api.get("/health", tags=["server"], responses={503: {"description": "Neo4j does not answer"}})
    def health() -> JSONResponse:
        """Whether the server and its Neo4j answer: ``neo4j`` gives, per knowledge base open (the default one is
        opened), ``ok`` or ``unavailable: <why>``. 200 when all answer, else 503 with ``status: unavailable``.
        Needs no token."""
        states: dict[str, str] = {}
        names = {settings.default_kb, *kbs.opened()}
        for name in sorted(names):
            try:
                kbs.get(name, settings.kbs).ping()
                states[name] = "ok"
            except (Neo4jUnavailable, QueryError) as exc:
                states[name] = f"unavailable: {exc}".splitlines()[0]
            except StrataError as exc:  # the default knowledge base cannot even be opened (bad configuration)
                states[name] = f"unavailable: {type(exc).__name__}: {exc}".splitlines()[0]
        healthy = all(state == "ok" for state in states.values())
        return RedactedJSONResponse(status_code=200 if healthy else 503, content={
            "status": "ok" if healthy else "unavailable", "neo4j": states, "default_kb": settings.default_kb,
            "kbs": sorted(settings.kbs), "auth": settings.token is not None})

    @api.get("/documents", tags=["documents"], dependencies=guarded)
    def list_documents(kb: KnowledgeService = Depends(service), skip: int = Query(0, ge=0, le=MAX_SKIP),
                       limit: int = Query(1000, ge=1, le=10_000)) -> list[DocumentInfo]:
        return kb.documents(skip=skip, limit=limit)

    @api.post("/documents", tags=["documents"], dependencies=guarded)
    def upload(files: list[UploadFile] = File(..., description="Documents to load (PDF, Markdown, HTML, ...)."),
               path: list[str] | None = Form(
                   None, description="The name each file is kept under in this knowledge base, one per file in "
                   "order (e.g. `team-a/minutes.md`): a relative path of up to 8 parts, each at most 100 "
                   "characters, no `.` or `..`. Default: a new name per upload (`upload-<random>/<file name>`), "
                   "so two uploads never replace each other."),
               replace: bool = Query(False, description="Replace documents already kept under these names. "
                                     "Without it, a name that holds other content is refused with 409."),
               kb: KnowledgeService = Depends(service)) -> dict[str, Any]:
        """Load uploaded files. A document's identity is the knowledge base plus its name (``path``): the
        same name with the same content is ``unchanged``; with other content it is replaced only when
        ``replace=true`` (409 otherwise). Files are written to a folder only this user can enter, loaded,
        then removed; the document's source is ``<upload folder>/<kb>/<name>``.
        """
        names = list(path or [])
        if names and len(names) != len(files):
            raise HTTPException(422, f"{len(names)} path values for {len(files)} files: give one per file, or none")
        with upload_lock:
            folder = upload_folder(kb.name)
            chosen = [_upload_name(names[i] if names else None, f.filename) for i, f in enumerate(files)]
            if len(set(chosen)) != len(chosen):
                raise HTTPException(422, "two files of one upload have the same path")
            paths: list[Path] = []
            try:
                for upload_file, name in zip(files, chosen, strict=True):
                    saved = _save(upload_file, folder, name)
                    paths.append(saved)
                    existing = kb.find(str(saved))
                    if existing is not None and not replace and existing.sha256 != _sha256(saved):
                        raise HTTPException(409, f"a document is already kept as {name!r} in knowledge base "
                                                 f"{kb.name!r} ({existing.id}); send replace=true to replace it, "
                                                 "or another path")
                data = kb.load(paths).to_json()
            finally:
                for saved in paths:
                    saved.unlink(missing_ok=True)
        data["uploads"] = [{"path": name, "source": str(saved)} for name, saved in zip(chosen, paths, strict=True)]
        return data

    @api.delete("/documents/{key:path}", tags=["documents"], dependencies=guarded)
    def delete_document(key: str, kb: KnowledgeService = Depends(service)) -> DocumentInfo:
        """Delete a document (by id or source path) and everything derived only from it."""
        if kb.find(key) is None:
            raise HTTPException(404, f"no document with id or source {key!r}")
        return kb.delete(key)

    @api.post("/ask", tags=["answers"], dependencies=guarded)
    def ask(body: AskRequest, kb: KnowledgeService = Depends(service)) -> AskResponse:
        """Answer a question with citations (document, page, span), the reasoning trace and a Browser link."""
        return answer_view(kb.name, kb.ask(body.question, method=body.method), kb.browser_url)

    @api.post("/retrieve", tags=["answers"], dependencies=guarded)
    def retrieve(body: RetrieveRequest, kb: KnowledgeService = Depends(service)) -> RetrieveResponse:
        """The top-k chunks for a question, each with its score and how it was found."""
        return RetrieveResponse(kb=kb.name, hits=kb.retrieve(body.question, k=body.k))

    @api.get("/stats", tags=["server"], dependencies=guarded)
    def stats(kb: KnowledgeService = Depends(service)) -> StatsView:
        """Node counts per layer and label, relationship counts, and the state of every index."""
        return StatsView.of(kb.name, kb.stats())

    static = resources.files("kg.app.rest").joinpath("static")

    @api.get("/", include_in_schema=False)
    def page() -> FileResponse:
        return FileResponse(str(static.joinpath("index.html")))

    @api.get("/static/{name}", include_in_schema=False)
    def asset(name: str) -> FileResponse:
        if name not in {"app.js", "style.css"}:
            raise HTTPException(404, "no such file")
        return FileResponse(str(static.joinpath(name)))

    def limit_of(scope: Scope) -> int:
        is_upload = scope.get("method") == "POST" and scope.get("path") == "/documents"
        return settings.max_upload_bytes if is_upload else settings.max_body_bytes

    api.add_middleware(BodyLimit, limit_of=limit_of)
    api.add_middleware(RequestGuard, token=settings.token, wait_s=settings.neo4j_wait_s)  # outermost: runs first
    return api


_MAX_PARTS = 8
_MAX_PART_CHARS = 100


def _upload_name(given: str | None, filename: str | None) -> str:
    """The name an upload is kept under: the client's relative path, checked (400 if unusable), or a new
    ``upload-<random>/<file name>`` (see the ``POST /documents`` docs)."""
    if given is None:
        base = _UNSAFE.sub("_", Path((filename or "").replace("\\", "/")).name).strip(" .")[:_MAX_PART_CHARS]
        if not base:
            raise HTTPException(400, "an uploaded file has no usable name; give it a path")
        return f"upload-{uuid.uuid4().hex[:16]}/{base}"
    parts = given.replace("\\", "/").strip("/").split("/")
    if len(given) > 1000 or len(parts) > _MAX_PARTS:
        raise HTTPException(400, f"path {given[:80]!r} is too long: at most {_MAX_PARTS} parts")
    clean = []
    for part in parts:
        if part in ("", ".", "..") or len(part) > _MAX_PART_CHARS or _UNSAFE.search(part) or part != part.strip(" "):
            raise HTTPException(400, f"path {given[:80]!r} is not a usable name: each part 1 to {_MAX_PART_CHARS} "
                                     "letters, digits, spaces, '.', '_' or '-', and no '.' or '..' parts")
        clean.append(part)
    return "/".join(clean)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(_UPLOAD_CHUNK):
            digest.update(block)
    return digest.hexdigest()


def _save(upload: UploadFile, folder: Path, name: str) -> Path:
    path = folder.joinpath(*name.split("/"))
    parent = folder
    for part in name.split("/")[:-1]:  # each folder a real private one of ours, never a planted link
        parent = owned_dir(parent / part, "upload folder")
    path.unlink(missing_ok=True)  # a leftover of an interrupted upload; unlink never follows a link
    # O_EXCL|O_NOFOLLOW: write a new file of our own, never through a link planted at that name.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as out:
        while block := upload.file.read(_UPLOAD_CHUNK):
            out.write(block)
    return path
