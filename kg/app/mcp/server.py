"""The MCP server: Strata's search, answers, documents, chunks and entities as tools, outlines as resources.

Built on the official ``mcp`` SDK (:class:`mcp.server.mcpserver.MCPServer`) over the same
:class:`kg.app.client.Strata` client as the CLI and the REST API; the tools' logic is in :mod:`kg.app.mcp.tools`, their
types in :mod:`kg.app.mcp.models`. The server is read-only unless :attr:`McpSettings.allow_write` is set, and serves
only the knowledge bases it was started with, opened on first use. ``strata mcp`` runs it over stdio (the
default) or streamable HTTP with an optional bearer token (:func:`http_app`).

Example::

    pool = KnowledgeBasePool(lambda name: Strata.connect(kb=name), McpSettings(default_kb="demo"))
    server = create_server(pool, McpSettings(default_kb="demo"))
    anyio.run(server.run_stdio_async)
"""

# No ``from __future__ import annotations`` here: the SDK reads the tools' annotations at registration, and they
# use names local to create_server (the knowledge bases and limits this server was started with).
import hmac
import logging
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.context import Context
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError, UnexpectedToolError
from mcp_types import CallToolResult, InputRequiredResult, TextContent, ToolAnnotations
from mcp_types import Resource as MCPResource
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from kg.app.client import Strata
from kg.app.mcp import render, tools
from kg.app.mcp.models import (
    AskResult,
    ChunkResult,
    DeleteResult,
    DocumentsResult,
    EntityResult,
    LoadResult,
    SearchFilters,
    SearchResult,
)
from kg.errors import StrataError
from kg.shared.redaction import redact

__all__ = [
    "READ_TOOLS", "WRITE_TOOLS", "BearerAuth", "KnowledgeBasePool", "McpSettings", "UnknownKnowledgeBase",
    "create_server", "http_app",
]

READ_TOOLS = ("search", "ask", "list_documents", "get_chunk", "explain_entity")
WRITE_TOOLS = ("load", "delete")

RetrievalMethod = Literal["strata", "chunk", "atom", "fulltext", "hybrid", "multigrain", "kg2rag", "pgrag", "tags",
                          "hr", "ppr"]
"""kg.retrieval.METHODS, spelled out so the tool's schema lists them."""
ReasoningMethod = Literal["auto", "decompose", "zero-shot-cot", "naive-r", "naive-hr", "self-ask", "self-ask-r",
                          "self-ask-hr", "kg2rag", "pgrag"]
"""reasoning.METHODS, spelled out so the tool's schema lists them."""

_T = TypeVar("_T")
logger = logging.getLogger(__name__)
_READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
_OUTLINES_LISTED = 500


class McpSettings(BaseModel):
    """What one MCP server serves and allows."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    default_kb: str = "default"
    other_kbs: tuple[str, ...] = ()
    allow_write: bool = False
    load_roots: tuple[Path, ...] = Field(
        (), description="Folders `load` may read files from (resolved); none: `load` takes text only.")
    max_text_chars: int = 2_000_000

    @property
    def kbs(self) -> tuple[str, ...]:
        """Every knowledge base served, the default first."""
        return tuple(dict.fromkeys((self.default_kb, *self.other_kbs)))


class UnknownKnowledgeBase(StrataError):
    """A tool named a knowledge base this server does not serve."""


class KnowledgeBasePool:
    """The served knowledge bases, each connected on first use (the default one when the server starts)."""

    def __init__(self, opener: Callable[[str], Strata], settings: McpSettings) -> None:
        self._opener = opener
        self._kbs = settings.kbs
        self._open: dict[str, Strata] = {}
        self._lock = threading.Lock()  # guards the two dicts
        self._connecting: dict[str, threading.Lock] = {}  # one per name: a slow connect blocks only its own

    @property
    def names(self) -> tuple[str, ...]:
        return self._kbs

    def get(self, name: str | None = None) -> Strata:
        """The client of knowledge base ``name`` (the default when ``None``), connected if it is not yet."""
        chosen = name or self._kbs[0]
        if chosen not in self._kbs:
            raise UnknownKnowledgeBase(f"this server does not serve knowledge base {chosen!r}; it serves "
                                       f"{', '.join(repr(k) for k in self._kbs)} (strata mcp --kb NAME)")
        with self._lock:
            if chosen in self._open:
                return self._open[chosen]
            connecting = self._connecting.setdefault(chosen, threading.Lock())
        with connecting:
            with self._lock:
                if chosen in self._open:
                    return self._open[chosen]
            kb = self._opener(chosen)
            with self._lock:
                self._open[chosen] = kb
            return kb

    def close(self) -> None:
        with self._lock:
            for kb in self._open.values():
                kb.close()
            self._open.clear()


def _version() -> str:
    try:
        return version("strata-kg")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree that was never installed
        return "0"


def _result(model: BaseModel, text: str) -> CallToolResult:
    """A tool result: the model as structured content (checked against the output schema) and as text."""
    return CallToolResult(content=[TextContent(type="text", text=text)],
                          structured_content=model.model_dump(mode="json"))


def _guard(call: Callable[[], _T]) -> _T:
    """Run a tool's body; Strata's errors become tool errors the caller reads, secrets masked (see
    :mod:`kg.shared.redaction`); other errors stay crashes, whose text the SDK keeps on the server."""
    try:
        return call()
    except StrataError as exc:
        raise ToolError(redact(str(exc))) from exc  # an endpoint's error text may quote a secret


def _validation_message(tool: str, exc: ValidationError) -> str:
    problems = []
    for err in exc.errors():
        field = ".".join(str(part) for part in err["loc"]) or "arguments"
        value = err.get("input")
        shown = "" if err["type"] == "missing" else f" (got {_short(value)})"
        problems.append(f"{field}: {err['msg']}{shown}")
    return f"invalid arguments for {tool}: " + "; ".join(problems)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class _StrataMCP(MCPServer[None]):
    """MCPServer with clear argument errors, a clear refusal of write tools, and every document's outline
    listed as a resource."""

    def __init__(self, pool: KnowledgeBasePool, settings: McpSettings, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.pool = pool
        self.strata_settings = settings

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Context[None, Any] | None = None
                        ) -> CallToolResult | InputRequiredResult:
        if name in WRITE_TOOLS and not self.strata_settings.allow_write:
            raise ToolError(f"{name} is disabled: this server is read-only (start it with strata mcp --allow-write)")
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError) and not isinstance(exc, UnexpectedToolError):
                raise ToolError(_validation_message(name, exc.__cause__)) from exc.__cause__
            raise

    async def list_resources(self) -> list[MCPResource]:
        listed = await super().list_resources()
        name = self.pool.names[0]

        def outlines() -> list[MCPResource]:
            docs = self.pool.get(name).documents(limit=_OUTLINES_LISTED)
            return [MCPResource(uri=f"strata://{name}/documents/{d.id}/outline", name=f"{d.title} (outline)",
                                title=f"Outline of {d.title}", mime_type="text/markdown",
                                description=f"Sections and chunk ids of {d.source} ({d.format}, {d.chunks} chunks)")
                    for d in docs]

        try:
            return listed + await anyio.to_thread.run_sync(outlines)
        except StrataError:
            return listed  # the template still serves every outline; listing is a convenience


def _instructions(settings: McpSettings) -> str:
    kbs = ", ".join(repr(k) for k in settings.kbs)
    write = ("load and delete change the knowledge base." if settings.allow_write
             else "This server is read-only.")
    return (
        f"Strata: cited evidence from a knowledge graph of documents. Knowledge bases: {kbs} (the first is the "
        "default; every tool takes kb=NAME). Use search to find passages (each hit has its document title, page, "
        "character span and chunk id), ask for an answer with citations, get_chunk to read a chunk in its "
        "context, explain_entity for what the graph knows about a name, list_documents and the outline resources "
        "(strata://KB/documents/ID/outline) to browse. Cite as: title, page, characters A-B (chunk ID), and quote "
        f"only text the tools returned. {write}"
    )


def create_server(pool: KnowledgeBasePool, settings: McpSettings) -> MCPServer[None]:
    """The MCP server over ``pool``'s knowledge bases; the write tools exist only with ``allow_write``.

    The server does not close ``pool``; its owner does, after the server stops.
    """

    @asynccontextmanager
    async def warm(_: MCPServer[None]) -> AsyncIterator[None]:
        # Connect the default knowledge base before the first request (starting its local Neo4j if needed),
        # so a broken configuration fails at once, with its message, instead of at the first tool call.
        kb = await anyio.to_thread.run_sync(pool.get)
        if not await anyio.to_thread.run_sync(lambda: kb.documents(limit=1)):
            name = settings.default_kb
            logger.warning("knowledge base %r holds no documents yet: load some (strata --kb %s load PATH) or "
                           "build the sample one (strata --kb %s demo)", name, name, name)
        yield None

    server = _StrataMCP(pool, settings, name="strata", title="Strata", version=_version(),
                        instructions=_instructions(settings), lifespan=warm, log_level="WARNING")
    kb_help = (f"Knowledge base to use: one of {', '.join(repr(k) for k in settings.kbs)}; "
               f"default {settings.default_kb!r}.")
    KbArg = Annotated[str | None, Field(description=kb_help, max_length=63)]
    Question = Annotated[str, Field(min_length=1, max_length=4000, description="The question, in plain words.")]

    @server.tool(title="Search the knowledge base", annotations=_READ)
    def search(
        question: Question,
        k: Annotated[int, Field(ge=1, le=50, description="Hits per page.")] = 5,
        method: Annotated[RetrievalMethod, Field(
            description="Retrieval method; 'strata' (default) fuses vector, full-text, atom and link paths.")
        ] = "strata",
        filters: Annotated[SearchFilters | None, Field(description="Restrict the search.")] = None,
        offset: Annotated[int, Field(ge=0, le=99, description="Skip this many hits (paging).")] = 0,
        kb: KbArg = None,
    ) -> Annotated[CallToolResult, SearchResult]:
        """Find the passages (chunks) that best answer a question. Each hit has its document title, page,
        character span, chunk id, full text, score and how it was found (which retrieval paths, via which
        atom, entity or title). Page with offset; next_offset says where the next page starts."""
        result = _guard(lambda: tools.search(pool.get(kb), question, k=k, method=method, filters=filters,
                                             offset=offset))
        return _result(result, render.search_text(result))

    @server.tool(title="Answer with citations", annotations=_READ)
    def ask(
        question: Question,
        method: Annotated[ReasoningMethod, Field(
            description="Reasoning method; 'auto' routes by question class (factual, linkable, quantitative, "
                        "predictive, creative).")] = "auto",
        kb: KbArg = None,
    ) -> Annotated[CallToolResult, AskResult]:
        """Answer a question from the knowledge base with citations: each citation gives the document, page,
        character span, chunk id and the quoted text; also the evidence considered and a summary of the
        reasoning trace. Without an LLM configured the answer is extractive and says so."""
        result = _guard(lambda: tools.ask(pool.get(kb), question, method=method))
        return _result(result, render.ask_text(result))

    @server.tool(title="List the documents", annotations=_READ)
    def list_documents(
        offset: Annotated[int, Field(ge=0, description="Skip this many documents (paging).")] = 0,
        limit: Annotated[int, Field(ge=1, le=500, description="Documents per page.")] = 50,
        kb: KbArg = None,
    ) -> Annotated[CallToolResult, DocumentsResult]:
        """The loaded documents, ordered by source: id, title, source, format, pages, chunks, when loaded.
        total is the count of all of them; next_offset starts the next page."""
        result = _guard(lambda: tools.list_documents(pool.get(kb), offset=offset, limit=limit))
        return _result(result, render.documents_text(result))

    @server.tool(title="Read a chunk in context", annotations=_READ)
    def get_chunk(
        chunk_id: Annotated[str, Field(min_length=1, max_length=300,
                                       description="A chunk id, as search, ask and the outlines give them.")],
        neighbours: Annotated[int, Field(ge=0, le=5, description="Chunks to add on each side.")] = 1,
        kb: KbArg = None,
    ) -> Annotated[CallToolResult, ChunkResult]:
        """A chunk's full text with its location (title, page, character span), the path of section titles
        above it, and its neighbouring chunks before and after it."""
        result = _guard(lambda: tools.get_chunk(pool.get(kb), chunk_id, neighbours=neighbours))
        return _result(result, render.chunk_text(result))

    @server.tool(title="Explain an entity", annotations=_READ)
    def explain_entity(
        name: Annotated[str, Field(min_length=1, max_length=300, description="The entity's name or an alias.")],
        offset: Annotated[int, Field(ge=0, description="Skip this many facts (paging).")] = 0,
        limit: Annotated[int, Field(ge=1, le=100, description="Facts per page.")] = 20,
        kb: KbArg = None,
    ) -> Annotated[CallToolResult, EntityResult]:
        """What the knowledge graph knows about a name: the best-matching entity (type, aliases, counts),
        its facts (head, relation, tail) and the chunks that state them, with other entities the name
        matched."""
        result = _guard(lambda: tools.explain_entity(pool.get(kb), name, offset=offset, limit=limit))
        return _result(result, render.entity_text(result))

    @server.resource("strata://{kb}/documents/{document_id}/outline", name="document-outline",
                     title="A document's outline", mime_type="text/markdown",
                     description="The document's sections in reading order, with pages and chunk ids.")
    def outline(kb: str, document_id: str) -> str:
        try:
            result = tools.document_outline(pool.get(kb), document_id)
        except (UnknownKnowledgeBase, tools.ToolInputError) as exc:
            raise ResourceNotFoundError(str(exc)) from exc
        except StrataError as exc:
            raise ResourceError(redact(str(exc))) from exc
        return render.outline_text(result)

    @server.prompt(name="answer_with_citations", title="Answer with citations from Strata",
                   description="Answer a question only from Strata's evidence, citing every claim.")
    def answer_with_citations(question: str, kb: str | None = None) -> str:
        where = f" in knowledge base {kb!r} (pass kb={kb!r} to the tools)" if kb else ""
        return (
            f"Answer this question from the Strata knowledge base{where}:\n\n{question}\n\n"
            "Use the Strata tools: search for passages (try other wordings, or method='fulltext' for exact names), "
            "get_chunk to read a passage in context, explain_entity for a name, or ask for a cited draft answer "
            "whose citations you check. Answer only from the text the tools return. After each claim, cite its "
            "source as [title, page P, characters A-B, chunk ID] (no page for formats without pages) and quote "
            "the supporting words. If the evidence does not answer the question, say so and say what is missing; "
            "never fill a gap from memory."
        )

    if settings.allow_write:
        _write_tools(server, pool, settings, kb_help)
    return server


def _write_tools(server: MCPServer[None], pool: KnowledgeBasePool, settings: McpSettings, kb_help: str) -> None:
    KbArg = Annotated[str | None, Field(description=kb_help, max_length=63)]

    @server.tool(title="Load documents", annotations=ToolAnnotations(
        read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False))
    def load(
        paths: Annotated[list[str] | None, Field(
            max_length=100, description="Files or folders on the server's machine, inside its load roots "
                                        "(relative paths are read from the first root).")] = None,
        text: Annotated[str | None, Field(
            max_length=settings.max_text_chars, description="Text (Markdown) to load as one document.")] = None,
        title: Annotated[str | None, Field(
            max_length=200, description="The document's title when loading text; the same title replaces it.")
        ] = None,
        kb: KbArg = None,
    ) -> Annotated[CallToolResult, LoadResult]:
        """Load files (PDF, Markdown, HTML, text, DOCX, tables, QA corpora) or a text into the knowledge base,
        then build its distilled layer (atoms, triples) for what changed. Unchanged files are skipped, changed
        ones replaced. Give paths, or text with a title."""
        if (paths is None) == (text is None):
            raise ToolError("give either paths or text (with a title), not both and not neither")
        if text is not None and not (title or "").strip():
            raise ToolError("text needs a title: it names the document, and loading the same title replaces it")

        def run() -> LoadResult:
            client = pool.get(kb)
            if paths is not None:
                return tools.load_paths(client, paths, roots=settings.load_roots)
            assert text is not None and title is not None
            return tools.load_text(client, text, title=title, folder=client.settings.home / "mcp-texts")

        result = _guard(run)
        return _result(result, render.load_text(result))

    @server.tool(title="Delete a document", annotations=ToolAnnotations(
        read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False))
    def delete(
        document: Annotated[str, Field(min_length=1, max_length=4096,
                                       description="The document's id (list_documents) or source path.")],
        kb: KbArg = None,
    ) -> Annotated[CallToolResult, DeleteResult]:
        """Delete a document and everything derived only from it (sections, chunks, atoms, facts)."""
        result = _guard(lambda: tools.delete(pool.get(kb), document))
        return _result(result, render.delete_text(result))


class BearerAuth:
    """ASGI middleware: every HTTP request needs ``Authorization: Bearer <token>`` (401 otherwise).

    The token is compared in constant time and never logged or echoed.
    """

    def __init__(self, app: ASGIApp, token: SecretStr) -> None:
        self.app = app
        self._expected = token.get_secret_value().encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            header = dict(scope["headers"]).get(b"authorization", b"")
            scheme, _, value = header.partition(b" ")
            if scheme.lower() != b"bearer" or not hmac.compare_digest(value.strip(), self._expected):
                response = JSONResponse({"error": "missing or wrong bearer token"}, status_code=401,
                                        headers={"WWW-Authenticate": "Bearer"})
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def http_app(server: MCPServer[None], *, host: str, token: SecretStr | None) -> ASGIApp:
    """The streamable HTTP app (endpoint ``/mcp``), behind :class:`BearerAuth` when a token is given.

    On a loopback host the SDK also checks ``Host`` and ``Origin`` (DNS-rebinding protection).
    """
    app: ASGIApp = server.streamable_http_app(host=host)
    return BearerAuth(app, token) if token is not None else app
