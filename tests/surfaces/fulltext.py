"""A small, real ask/retrieve for the surface tests: Lucene full-text search over chunks in the real Neo4j.

The reasoning and retrieval layers are built elsewhere; until they are merged the surfaces are tested
through the same port with this implementation, which builds genuine answers from genuine chunks: the
answer quotes the best sentence of each hit and cites it by its exact character span.
"""

from __future__ import annotations

import re

from kg.api.ports import StrataService
from kg.retrieval.base import Hit, HitSource
from reasoning.types import Answer, Citation, TraceStep

_WORD = re.compile(r"\w{3,}")
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")
_SEARCH = """
CALL db.index.fulltext.queryNodes('chunk_text', $query, {limit: $k}) YIELD node, score
OPTIONAL MATCH (d:Document {id: node.document_id})
RETURN node.id AS chunk_id, node.text AS text, node.document_id AS document_id, node.title AS title,
       node.page AS page, node.char_start AS char_start, node.char_end AS char_end, score,
       d.source AS source
ORDER BY score DESC
"""


class FullTextService(StrataService):
    """:class:`StrataService` whose ask/retrieve are a full-text query over ``Chunk.text``."""

    def retrieve(self, question: str, *, k: int = 5) -> list[Hit]:
        terms = sorted({w.lower() for w in _WORD.findall(question)})
        if not terms:
            return []
        rows = self.kb.store.query(_SEARCH, query=" OR ".join(terms), k=k)
        return [Hit(**row, sources=[HitSource(path="fulltext", score=row["score"])]) for row in rows]

    def ask(self, question: str, *, method: str = "auto") -> Answer:
        terms = {w.lower() for w in _WORD.findall(question)}
        hits = self.retrieve(question, k=3)
        citations = []
        for marker, hit in enumerate(hits, start=1):
            best = max(_SENTENCE.finditer(hit.text),
                       key=lambda m: len(terms & {w.lower() for w in _WORD.findall(m.group())}))
            start, end = best.start() + (len(best.group()) - len(best.group().lstrip())), best.end()
            citations.append(Citation(**{**hit.location(), "char_start": hit.char_start + start,
                                         "char_end": hit.char_start + end}, marker=marker, text=hit.text[start:end]))
        answer = " ".join(f"{c.text} [{c.marker}]" for c in citations) or "No evidence found."
        trace = [TraceStep(index=0, kind="fulltext", detail={"terms": sorted(terms), "hits": len(hits)}),
                 TraceStep(index=1, kind="extract", detail={"citations": len(citations)})]
        return Answer(question=question, answer=answer, method="fulltext-extractive", offline=True,
                      citations=citations, evidence=hits, trace=trace, stop_reason="extracted")

    def close(self) -> None:
        """The store belongs to the test session, which closes it."""
