"""The one seam between the user surfaces (REST API, web page, demo) and the knowledge base.

The surfaces need a handful of operations; :class:`KnowledgeService` names them. :class:`StrataService`
implements it over a connected :class:`kg.app.client.Strata`; tests and embedders may offer another
implementation (e.g. one knowledge base per tenant) without touching the API or the demo.

Example::

    with Strata.connect(kb="pharma") as kb:
        service = StrataService(kb)
        answer = service.ask("Which batches failed release testing in 2023?")
        print(answer.answer, [c.title for c in answer.citations])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from kg.app.client import DocumentInfo, Stats, Strata
from kg.layers.corpus.ingest import LoadReport, Progress
from kg.retrieval.base import Hit
from reasoning.types import Answer

if TYPE_CHECKING:
    from kg.layers.distilled import DistillReport

__all__ = ["KnowledgeService", "ServiceFactory", "StrataService"]


@runtime_checkable
class KnowledgeService(Protocol):
    """What the surfaces ask of one knowledge base."""

    @property
    def name(self) -> str:
        """The knowledge base's name (``--kb``)."""

    @property
    def browser_url(self) -> str | None:
        """The Neo4j Browser of this knowledge base, when it has one people can open."""

    def ask(self, question: str, *, method: str = "auto") -> Answer: ...

    def retrieve(self, question: str, *, k: int = 5) -> list[Hit]: ...

    def distill(self, *, layers: Sequence[str] | None = None,
                document_ids: Sequence[str] | None = None) -> DistillReport: ...

    def documents(self, *, skip: int = 0, limit: int = 10_000) -> list[DocumentInfo]: ...

    def find(self, key: str) -> DocumentInfo | None: ...

    def stats(self) -> Stats: ...

    def load(self, paths: Sequence[Path], *, progress: Progress | None = None) -> LoadReport: ...

    def delete(self, key: str) -> DocumentInfo: ...

    def ping(self) -> None:
        """Return once the knowledge base's Neo4j answers; raise :class:`kg.errors.Neo4jUnavailable` if not."""

    def close(self) -> None: ...


ServiceFactory = Callable[[str], KnowledgeService]
"""Opens the knowledge base with the given name (the API keeps one service per name)."""


class StrataService:
    """:class:`KnowledgeService` over a connected :class:`Strata` client (which it closes)."""

    def __init__(self, kb: Strata) -> None:
        self.kb = kb

    @property
    def name(self) -> str:
        return self.kb.settings.kb

    @property
    def browser_url(self) -> str | None:
        return self.kb.endpoint.browser_url

    def ask(self, question: str, *, method: str = "auto") -> Answer:
        return self.kb.ask(question, method=method)

    def retrieve(self, question: str, *, k: int = 5) -> list[Hit]:
        return self.kb.retrieve(question, k=k)

    def distill(self, *, layers: Sequence[str] | None = None,
                document_ids: Sequence[str] | None = None) -> DistillReport:
        return self.kb.distill(layers=layers, document_ids=document_ids)

    def documents(self, *, skip: int = 0, limit: int = 10_000) -> list[DocumentInfo]:
        return self.kb.documents(skip=skip, limit=limit)

    def find(self, key: str) -> DocumentInfo | None:
        return self.kb.find(key)

    def stats(self) -> Stats:
        return self.kb.stats()

    def load(self, paths: Sequence[Path], *, progress: Progress | None = None) -> LoadReport:
        return self.kb.load(paths, progress=progress)

    def delete(self, key: str) -> DocumentInfo:
        return self.kb.delete(key)

    def ping(self) -> None:
        self.kb.store.read("meta/ping")

    def close(self) -> None:
        self.kb.close()
