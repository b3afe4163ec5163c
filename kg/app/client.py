"""The Python client: one knowledge base in Neo4j, and everything Strata does with it.

Example::

    from kg import Strata

    with Strata.connect() as kb:                 # settings from STRATA_* at this edge
        report = kb.load(["handbook.pdf", "notes/"])
        print(report.summary())
        for hit in kb.retrieve("Who approved the 2023 budget?"):
            print(hit.score, hit.title, hit.page)
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, SecretStr

import cypher
from kg.embeddings import Embedder, make_embedder
from kg.errors import StrataError
from kg.layers import LAYERS
from kg.layers.corpus.ingest import Ingestor, LoadReport, Progress
from kg.layers.resource.documents import delete_documents
from kg.llm import LLM, make_llm
from kg.provisioning import Endpoint, ensure_endpoint
from kg.retrieval.base import Hit, RetrievalFilter
from kg.retrieval.settings import RetrieverSettings
from kg.settings import Neo4jSettings, Settings
from kg.shared.redaction import remember, secrets_of
from kg.store.base import GraphStore
from kg.store.neo4j_store import Neo4jGraphStore
from kg.store.queries import (
    COUNT_LABEL,
    COUNT_REL,
    FILE_DOCUMENTS,
    FIND_DOCUMENT,
    LIST_DOCUMENTS,
    META_INDEXES,
    PENDING_COUNTS,
    IndexRow,
)
from kg.store.schema import SchemaStatus, ensure_schema, schema_status

if TYPE_CHECKING:
    from kg.layers.distilled import DistillConfig, DistillReport
    from reasoning import Answer, ReasoningSettings

__all__ = ["LAYERS", "AsyncStrata", "DocumentInfo", "Stats", "Strata"]



class DocumentInfo(BaseModel):
    """A loaded document as listed by :meth:`Strata.documents` (and by the REST API's ``/documents``)."""

    model_config = ConfigDict(frozen=True)

    id: str
    title: str
    source: str
    format: str
    pages: int | None
    sha256: str
    loaded_at: str
    chunks: int


@dataclass(frozen=True)
class Stats:
    """Node and relationship counts per label and type, and the state of every index."""

    nodes: dict[str, int]
    relationships: dict[str, int]
    indexes: list[IndexRow]
    schema: SchemaStatus
    pending: dict[str, int] = field(default_factory=dict)  # per distilled layer: chunks it has not distilled

    def by_layer(self) -> dict[str, int]:
        """Node counts summed per layer (see :data:`LAYERS`)."""
        return {layer: sum(self.nodes.get(label, 0) for label in labels) for layer, labels in LAYERS.items()}


class Strata:
    """A connected knowledge base. Build it with :meth:`connect`; close it (or use ``with``)."""

    def __init__(
        self, settings: Settings, store: GraphStore, embedder: Embedder, endpoint: Endpoint, llm: LLM
    ) -> None:
        self.settings = settings
        self.store = store
        self.embedder = embedder
        self.endpoint = endpoint
        self.llm = llm

    @classmethod
    def connect(
        cls,
        settings: Settings | None = None,
        *,
        uri: str | None = None,
        user: str = "neo4j",
        password: str | None = None,
        database: str | None = None,
        kb: str | None = None,
        embedder: Embedder | None = None,
        llm: LLM | None = None,
        budget_tokens: int | None = None,
    ) -> Strata:
        """Connect to the knowledge base, starting the local Neo4j if needed, and install the schema.

        Explicit arguments win over ``settings``; with neither, settings come from the environment.
        ``budget_tokens`` stops the job's LLM work cleanly before it would exceed that many tokens.

        Example::

            kb = Strata.connect(kb="pharma")                                   # local Neo4j, started if needed
            kb = Strata.connect(uri="neo4j+s://x.databases.neo4j.io", password=secret)   # an existing server
        """
        overrides: dict[str, Any] = {}
        if kb is not None:
            overrides["kb"] = kb
        base = settings or Settings.from_env(**overrides)
        if uri is not None:
            base = base.model_copy(update={"neo4j": Neo4jSettings(
                uri=uri, user=user, password=SecretStr(password or ""), database=database)})
        remember(*secrets_of(base), password)  # masked wherever an error or report might quote them
        endpoint = ensure_endpoint(base)
        store = Neo4jGraphStore.connect(endpoint.uri, endpoint.user, endpoint.password, endpoint.database)
        try:
            chosen = embedder or make_embedder(base.embedder, cache_dir=base.cache_dir)
            ensure_schema(store, chosen.name, chosen.dimensions, analyzer=base.fulltext_analyzer)
        except BaseException:
            store.close()
            raise
        model = llm or make_llm(base.llm, cache_dir=base.cache_dir, budget_tokens=budget_tokens)
        return cls(base, store, chosen, endpoint, model)

    def close(self) -> None:
        """Close the LLM client and the Neo4j driver (``with`` does this)."""
        self.llm.close()
        self.store.close()

    def __enter__(self) -> Strata:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def load(
        self,
        paths: Iterable[str | Path],
        *,
        include: Sequence[str] = (),
        exclude: Sequence[str] = (),
        password: str | None = None,
        progress: Progress | None = None,
    ) -> LoadReport:
        """Load files and folders; unchanged files are skipped, changed ones replaced.

        Example::

            report = kb.load(["handbook.pdf", "notes/"], include=["*.md", "*.pdf"])
            print(report.summary(), [f.path for f in report.files if f.error])
        """
        ingestor = Ingestor(
            self.store, self.embedder, batch_size=self.settings.batch_size,
            chunk_tokens=self.settings.chunk_tokens, chunk_overlap=self.settings.chunk_overlap,
            password=password, llm=self.llm,
        )
        report = ingestor.load([Path(p) for p in paths], include=include, exclude=exclude, progress=progress)
        report.llm = self.llm.accounting.report()  # the job's totals so far; zeros offline
        # Loading writes the corpus; distilling is :meth:`distill`'s. The report says what is left, so an
        # interrupted build is never silent: chunks of any document (this load's or an earlier one's).
        report.pending = self.pending()
        return report

    def pending(self, layers: Sequence[str] | None = None) -> dict[str, int]:
        """Chunks each distilled layer has not distilled yet (of ``layers``, default: the default layers
        of the configured LLM, or offline); :meth:`distill` (``strata distill``) finishes them.

        Example::

            if any(kb.pending().values()):
                kb.distill()
        """
        from kg.layers.distilled import default_layers, parse_layers

        chosen = parse_layers(layers) if layers is not None else None
        names = list(chosen or default_layers(self.llm.offline))
        return {r["layer"]: int(r["pending"]) for r in self.store.read(PENDING_COUNTS, layers=names)}

    def distill(
        self,
        *,
        layers: Sequence[str] | None = None,
        document_ids: Sequence[str] | None = None,
        config: DistillConfig | None = None,
        force: bool = False,
        progress: Callable[[str, int, int], None] | None = None,
        retry_failed: bool = True,
        batch_size: int | None = None,
        fuse: bool = False,
    ) -> DistillReport:
        """Build the distilled layers (see :func:`kg.layers.distilled.distill`) with the configured LLM, or offline.

        Example::

            report = kb.distill(layers=["atoms", "triples", "tables", "tags", "pseudograph"])
            print(report.to_json()["layers"]["atoms"]["created"])

        ``batch_size``: chunks per batch and transaction (default: ``DISTILL_BATCH_CHUNKS``, 2,000; with an LLM
        at most a few times the calls in flight); a batch also holds at most ``config.batch_chars`` of their text
        (2 million characters). Several processes may distil one knowledge base at once: each claims its own
        batches. ``fuse``: the pseudo-graph layer fuses its topics and fact items across documents (every one not
        fused yet), as ``config.fusion`` does; off by default (no retrieval method reads the fusion nodes).
        """
        from kg.layers.distilled import DistillConfig, distill

        # As many calls in flight as the endpoint takes (its slots: STRATA_LLM_MAX_CONCURRENCY).
        chosen = config or DistillConfig(llm_concurrency=self.settings.llm.max_concurrency)
        if fuse:
            chosen = replace(chosen, fusion=True)
        return distill(self.store, self.embedder, self.llm, layers=layers, document_ids=document_ids,
                       progress=progress, batch_size=batch_size, config=chosen, force=force,
                       retry_failed=retry_failed)

    def find(self, key: str) -> DocumentInfo | None:
        """The document with id ``key``, or loaded from the file ``key`` names; ``None`` if there is none.

        Sources are stored as absolute paths, so a relative path is read from the current folder::

            doc = kb.find("notes/handbook.md")      # same as kb.find("/home/me/notes/handbook.md")
        """
        for candidate in dict.fromkeys([key, str(Path(key).expanduser().resolve())]):
            rows = self.store.read(FIND_DOCUMENT, key=candidate)
            if rows:
                return DocumentInfo(**rows[0])
        return None

    def delete(self, key: str) -> DocumentInfo:
        """Delete a document (by id or source path, see :meth:`find`) and everything derived only from it.

        Example::

            removed = kb.delete("notes/old-handbook.md")
            print(removed.title, removed.chunks)
        """
        doc = self.find(key)
        if doc is None:
            raise StrataError(f"no document with id or source {key!r}")
        delete_documents(self.store, [doc.id])
        return doc

    def delete_file(self, path: str) -> list[DocumentInfo]:
        """Delete every document read from the file ``path`` (all the passages of a QA corpus, or the one
        document of any other file) and everything derived only from them, in one transaction.

        Example::

            removed = kb.delete_file("corpora/hotpotqa_corpus.json")
            print(len(removed), "passages deleted")
        """
        docs = [DocumentInfo(**row) for row in
                self.store.read(FILE_DOCUMENTS, file=str(Path(path).expanduser().resolve()))]
        if not docs:
            raise StrataError(f"no document with id or source {path!r}, and none was loaded from a file of that path")
        delete_documents(self.store, [d.id for d in docs])
        return docs

    def documents(self, *, skip: int = 0, limit: int = 10_000) -> list[DocumentInfo]:
        """The loaded documents, ordered by source, a page at a time.

        Example::

            for doc in kb.documents():
                print(doc.title, doc.pages, doc.chunks)
        """
        return [DocumentInfo(**row) for row in self.store.read(LIST_DOCUMENTS, skip=skip, limit=limit)]

    def ask(self, question: str, *, method: str = "auto", settings: ReasoningSettings | None = None) -> Answer:
        """Answer ``question`` with citations (see :func:`reasoning.answer`); the LLM comes from the settings.

        Example::

            answer = kb.ask("Which site had the most gearbox failures in 2024?")
            print(answer.answer)
            for c in answer.citations:
                print(c.marker, c.title, c.page, c.char_start, c.char_end)
        """
        from reasoning import answer

        return answer(question, store=self.store, embedder=self.embedder, llm=self.llm, method=method,
                      settings=settings)

    def retrieve(self, question: str, *, method: str = "strata", k: int = 5,
                 where: RetrievalFilter | None = None, settings: RetrieverSettings | None = None,
                 **overrides: object) -> list[Hit]:
        """The top ``k`` chunks for ``question`` by a :data:`kg.retrieval.METHODS` method, with explanations.
        ``settings`` is the method's model from :mod:`kg.retrieval.settings` (``overrides``: some of its fields).

        Example::

            for hit in kb.retrieve("gearbox oil sampling interval", k=3):
                print(round(hit.score, 3), hit.title, hit.page, [s.path for s in hit.sources])
        """
        from kg.retrieval import make_retriever

        return make_retriever(method, self.store, self.embedder, llm=self.llm, settings=settings,
                              **overrides).retrieve(
            question, k=k, where=where)

    def stats(self) -> Stats:
        """Node and relationship counts, per label and per layer, and every index's state.

        Example::

            stats = kb.stats()
            print(stats.by_layer(), stats.schema.embedder)
        """
        nodes = {label: self.store.read(COUNT_LABEL.render(label=label))[0]["count"]
                 for label in sorted(cypher.LABELS)}
        rels = {rel: self.store.read(COUNT_REL.render(rel=rel))[0]["count"]
                for rel in sorted(cypher.RELATIONSHIPS)}
        from kg.layers.distilled import ALL_LAYERS

        # Every layer's pending chunks, so an interrupted build shows; a layer never built shows them all.
        return Stats(nodes, rels, self.store.read(META_INDEXES), schema_status(self.store),
                     pending=self.pending(list(ALL_LAYERS)))


class AsyncStrata:
    """The same client for asyncio code: each call runs the sync client in a worker thread.

    Example::

        async with await AsyncStrata.connect(kb="pharma") as kb:
            await kb.load(["sops/"])
            answer = await kb.ask("Who releases a batch?")
    """

    def __init__(self, sync: Strata) -> None:
        self.sync = sync

    @classmethod
    async def connect(cls, settings: Settings | None = None, **kwargs: Any) -> AsyncStrata:
        """:meth:`Strata.connect` in a worker thread (same arguments)."""
        return cls(await asyncio.to_thread(Strata.connect, settings, **kwargs))

    async def load(self, paths: Iterable[str | Path], **kwargs: Any) -> LoadReport:
        """:meth:`Strata.load` in a worker thread: ``report = await kb.load(["handbook.pdf"])``."""
        return await asyncio.to_thread(self.sync.load, list(paths), **kwargs)

    async def distill(self, **kwargs: Any) -> DistillReport:
        """:meth:`Strata.distill` in a worker thread."""
        return await asyncio.to_thread(self.sync.distill, **kwargs)

    async def ask(self, question: str, **kwargs: Any) -> Answer:
        """:meth:`Strata.ask` in a worker thread: ``answer = await kb.ask("Why did turbine K-07 stop?")``."""
        return await asyncio.to_thread(self.sync.ask, question, **kwargs)

    async def retrieve(self, question: str, **kwargs: Any) -> list[Hit]:
        """:meth:`Strata.retrieve` in a worker thread: ``hits = await kb.retrieve("oil sampling", k=3)``."""
        return await asyncio.to_thread(self.sync.retrieve, question, **kwargs)

    async def find(self, key: str) -> DocumentInfo | None:
        """:meth:`Strata.find` in a worker thread."""
        return await asyncio.to_thread(self.sync.find, key)

    async def delete(self, key: str) -> DocumentInfo:
        """:meth:`Strata.delete` in a worker thread."""
        return await asyncio.to_thread(self.sync.delete, key)

    async def delete_file(self, path: str) -> list[DocumentInfo]:
        """:meth:`Strata.delete_file` in a worker thread."""
        return await asyncio.to_thread(self.sync.delete_file, path)

    async def documents(self, *, skip: int = 0, limit: int = 10_000) -> list[DocumentInfo]:
        """:meth:`Strata.documents` in a worker thread."""
        return await asyncio.to_thread(self.sync.documents, skip=skip, limit=limit)

    async def stats(self) -> Stats:
        """:meth:`Strata.stats` in a worker thread."""
        return await asyncio.to_thread(self.sync.stats)

    async def aclose(self) -> None:
        """Close the client (``async with`` does this)."""
        await asyncio.to_thread(self.sync.close)

    async def __aenter__(self) -> AsyncStrata:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()
