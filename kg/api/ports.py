"""The one seam between the user surfaces (REST API, web page, demo) and the knowledge base.

The surfaces need a handful of operations; :class:`KnowledgeService` names them. :class:`StrataService`
implements it over a connected :class:`kg.client.Strata`. Asking, retrieving and distilling are built
by other parts of Strata and reach the client as ``Strata.ask`` / ``Strata.retrieve`` /
``Strata.distill``; they are looked up here, once per call, so a build without them still serves
documents and stats and says plainly what is missing (:class:`CapabilityMissing`).

Example::

    with Strata.connect(kb="pharma") as kb:
        service = StrataService(kb)
        answer = service.ask("Which batches failed release testing in 2023?")
        print(answer.answer, [c.title for c in answer.citations])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from kg.client import DocumentInfo, Stats, Strata
from kg.errors import StrataError
from kg.ingest import LoadReport, Progress
from kg.retrieval.base import Hit
from reasoning.types import Answer

__all__ = ["CapabilityMissing", "KnowledgeService", "ServiceFactory", "StrataService"]


class CapabilityMissing(StrataError):
    """The knowledge base cannot do this in this build (e.g. no reasoning layer installed)."""


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

    def distill(self, *, document_ids: Sequence[str] | None = None) -> Any: ...

    def documents(self, *, skip: int = 0, limit: int = 10_000) -> list[DocumentInfo]: ...

    def stats(self) -> Stats: ...

    def load(self, paths: Sequence[Path], *, progress: Progress | None = None) -> LoadReport: ...

    def delete(self, key: str) -> DocumentInfo: ...

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

    def _capability(self, method: str) -> Callable[..., Any]:
        found = getattr(self.kb, method, None)
        if not callable(found):
            raise CapabilityMissing(f"this Strata build has no Strata.{method}: install the layer that provides it")
        return found  # type: ignore[no-any-return]

    def ask(self, question: str, *, method: str = "auto") -> Answer:
        answer = self._capability("ask")(question, method=method)
        if not isinstance(answer, Answer):
            raise StrataError(f"Strata.ask returned {type(answer).__name__}, not reasoning.types.Answer")
        return answer

    def retrieve(self, question: str, *, k: int = 5) -> list[Hit]:
        return list(self._capability("retrieve")(question, k=k))

    def distill(self, *, document_ids: Sequence[str] | None = None) -> Any:
        return self._capability("distill")(document_ids=None if document_ids is None else list(document_ids))

    def documents(self, *, skip: int = 0, limit: int = 10_000) -> list[DocumentInfo]:
        return self.kb.documents(skip=skip, limit=limit)

    def stats(self) -> Stats:
        return self.kb.stats()

    def load(self, paths: Sequence[Path], *, progress: Progress | None = None) -> LoadReport:
        return self.kb.load(paths, progress=progress)

    def delete(self, key: str) -> DocumentInfo:
        return self.kb.delete(key)

    def close(self) -> None:
        self.kb.close()
