"""Shared machinery of ``strata eval ...``: an isolated Neo4j, a QA corpus loaded into it, distillation.

An evaluation never touches the user's knowledge base: it runs in a throwaway local Neo4j (its own ports
and a temporary folder, removed afterwards) or, with a name, in an evaluation server kept between runs
under ``<STRATA_HOME>/eval/<name>`` so a large corpus is loaded and distilled once. Loading reuses what is
unchanged: each passage's hash is its own text's, so re-running with another ``--limit`` only loads the
new passages, and passages no longer in the corpus are deleted so every run scores exactly its corpus.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kg.embeddings import Embedder
from kg.errors import ConfigError, LoaderError
from kg.layers.corpus.ingest import Ingestor
from kg.layers.distilled import DistillReport, distill
from kg.layers.resource.documents import delete_documents
from kg.llm import LLM
from kg.provisioning.local import LocalNeo4j
from kg.provisioning.throwaway import throwaway_server
from kg.retrieval.common import graph_has
from kg.settings import Settings, kept_ports
from kg.shared.ids import document_id
from kg.store.base import GraphStore
from kg.store.neo4j_store import Neo4jGraphStore
from kg.store.queries import LIST_DOCUMENTS
from kg.store.schema import ensure_schema
from loaders.models import SourceDocument
from loaders.qa import QALoader, passage_key

__all__ = ["CorpusLoad", "corpus_documents", "distill_eval_layers", "isolated_store", "layers_for",
           "load_corpus", "method_unavailable", "passage_keys"]

_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")


@contextmanager
def isolated_store(settings: Settings, embedder: Embedder, *, kb: str | None = None) -> Iterator[GraphStore]:
    """A store on a throwaway Neo4j (``kb=None``) or on the named evaluation server, schema installed."""
    if kb is None:
        with throwaway_server(settings) as endpoint:
            yield from _schema_store(endpoint.uri, endpoint.user, endpoint.password, embedder,
                                     settings.fulltext_analyzer)
        return
    if not _NAME.match(kb):
        raise ConfigError(f"invalid evaluation knowledge base name {kb!r}: use lowercase letters, digits, - and _")
    root = settings.home / "eval" / kb
    bolt, http = kept_ports(root)
    server = LocalNeo4j(settings.local.another_server(root / "neo4j", bolt_port=bolt, http_port=http, heap="2g",
                                                      pagecache="1g"))
    info = server.start()
    try:
        yield from _schema_store(info.bolt_uri, info.user, info.password, embedder, settings.fulltext_analyzer)
    finally:
        server.stop()


def _schema_store(uri: str, user: str, password: str, embedder: Embedder, analyzer: str | None
                  ) -> Iterator[GraphStore]:
    store = Neo4jGraphStore.connect(uri, user, password)
    try:
        ensure_schema(store, embedder.name, embedder.dimensions, analyzer=analyzer)
        yield store
    finally:
        store.close()


def _records(path: Path) -> list[Any]:
    raw = path.read_text("utf-8")
    try:
        data = json.loads(raw)
    except json.JSONDecodeError:
        data = [json.loads(line) for line in raw.splitlines() if line.strip()]
    if not isinstance(data, list):
        raise LoaderError(str(path), "expected a list of questions")
    return data


def corpus_documents(dataset: Path, corpus: Path | None = None, *, limit: int | None = None) -> list[SourceDocument]:
    """The passages to retrieve from, as the QA loader makes them (title, text, sentences).

    With ``corpus``, that file's passages. Without, the union of the paragraphs of the (first ``limit``)
    questions: PIKE-RAG's protocol. Sources are rewritten to ``eval:<title>``; a passage's hash is its own,
    not its file's, so the same passage keeps its id and is reused whatever file or slice it came from.
    """
    with tempfile.TemporaryDirectory(prefix="strata-eval-") as tmp:
        if corpus is not None:
            path = corpus
        else:
            path = Path(tmp) / "questions.json"
            path.write_text(json.dumps(_records(dataset)[:limit]), "utf-8")
        docs = list(QALoader().load(path))
    prefix = f"{path}#"
    return [
        doc.model_copy(update={"source": "eval:" + doc.source.removeprefix(prefix), "file": None})
        for doc in docs
    ]


def passage_keys(docs: Sequence[SourceDocument]) -> dict[str, str]:
    """Each loaded document's id -> its passage's :func:`~loaders.qa.passage_key`: hits name their document,
    gold evidence names passages (by title and text, as MuSiQue repeats titles within a question)."""
    return {document_id(d.source): passage_key(d.title, d.text) for d in docs}


@dataclass
class CorpusLoad:
    """What loading the corpus did: documents written (new or changed), kept, and removed."""

    documents: int
    written: list[str] = field(default_factory=list)
    removed: int = 0


def load_corpus(store: GraphStore, embedder: Embedder, docs: Sequence[SourceDocument], *,
                chunk_tokens: int = 256, chunk_overlap: int = 32) -> CorpusLoad:
    """Make the store hold exactly ``docs``: load new and changed ones, delete the others."""
    ingestor = Ingestor(store, embedder, chunk_tokens=chunk_tokens, chunk_overlap=chunk_overlap)
    prepared = [ingestor.prepare(doc) for doc in docs]
    wanted = {p.id for p in prepared}
    present = [row["id"] for row in store.read(LIST_DOCUMENTS, skip=0, limit=10_000_000)]
    stale = [i for i in present if i not in wanted]
    if stale:
        delete_documents(store, stale)
    outcomes = ingestor.write(prepared)
    failed = [o for o in outcomes if o.status == "failed"]
    if failed:
        raise LoaderError("corpus", f"{len(failed)} passages failed to load: {failed[0].error}")
    written = [o.document_id for o in outcomes if o.status in ("loaded", "replaced")]
    return CorpusLoad(documents=len(prepared), written=written, removed=len(stale))


# Every layer a retrieval method reads: atoms (atom, multigrain), triples (kg2rag, strata's entity links),
# tags (tags), the pseudo-graph (pgrag). Offline, each is built by its offline method.
EVAL_LAYERS = ("atoms", "triples", "tags", "pseudograph")


def layers_for(methods: Collection[str]) -> tuple[str, ...]:
    """The distilled layers ``methods`` (answering or retrieval methods) read: the pseudo-graph (two calls per
    chunk and one per document with a model) only for ``pgrag`` and ``auto``, which may route to it."""
    keep_pseudograph = bool({"pgrag", "auto"} & set(methods))
    return tuple(name for name in EVAL_LAYERS if name != "pseudograph" or keep_pseudograph)


def distill_eval_layers(store: GraphStore, embedder: Embedder, llm: LLM, document_ids: list[str],
                        layers: Sequence[str] = EVAL_LAYERS) -> DistillReport | None:
    """Build the distilled ``layers`` the methods read (offline methods when ``llm`` is offline); the job's
    report, or None when no document was written."""
    if not document_ids:
        return None
    return distill(store, embedder, llm, layers=layers, document_ids=document_ids)


# Retrieval methods that need a part of the distilled layer, and the label that shows it is there.
_NEEDS = {"atom": "Atom", "kg2rag": "Fact", "pgrag": "FactItem"}


def method_unavailable(store: GraphStore, method: str) -> str | None:
    """Why retrieval ``method`` cannot run on this graph after distillation, or None when it can."""
    label = _NEEDS.get(method)
    if label is None or graph_has(store, label):
        return None
    return f"needs {label} nodes, and distillation built none from this corpus"
