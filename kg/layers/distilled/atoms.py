"""Knowledge atomizing (PIKE-RAG 5.3.1): the questions each chunk answers, or offline its statements.

The layer's :class:`~kg.layers.distilled.extractors.AtomExtractor` gives each chunk's atoms: with an LLM
the atomic questions it answers (from the call per chunk it shares with triples and tags,
:mod:`kg.layers.distilled.combined`, or alone the ``atomic_questions`` task at temperature ``atom_temperature``,
0.7 by default as the paper samples diverse questions); offline, its atomic statements (sentences, long ones
cut at clause boundaries). Atoms are de-duplicated per chunk on their normalised text, embedded in one call per
batch and written as ``(:Atom {kind, text, source, embedding})-[:ATOM_OF]->(:Chunk)``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from kg.layers.distilled.base import Built, ExtractorLayer, short_hash, written
from kg.layers.distilled.extractors.protocols import AtomExtractor
from kg.layers.distilled.models import ChunkRecord
from kg.layers.distilled.text import text_key

__all__ = ["AtomsLayer"]


class AtomsLayer(ExtractorLayer[AtomExtractor]):
    name = "atoms"
    llm_tasks = ("atomic_questions",)
    clear = ("distill/clear_atoms",)

    def build(self, chunks: Sequence[ChunkRecord], *, previous_written: Callable[[], None] = written) -> Built:
        built = Built()
        kind, source = self.extractor.kind, self.extractor.source
        per_chunk = self.extractor.atoms(chunks, built)
        rows = []
        for chunk, texts in per_chunk:
            seen: set[str] = set()
            for text in texts:
                key = text_key(text)
                if not key or key in seen:
                    continue
                seen.add(key)
                rows.append({"id": f"{chunk.id}:a{short_hash(kind, key, n=10)}", "chunk_id": chunk.id,
                             "document_id": chunk.document_id, "kind": kind, "text": text.strip(),
                             "source": source})
            built.done.append(chunk.id)
        if rows:
            for row, vector in zip(rows, self.ctx.embedder.embed([r["text"] for r in rows]), strict=True):
                row["embedding"] = vector  # a list as it is sent: embedding_listed
        built.rows.append(("distill/create_atoms", rows))
        built.counts = {"Atom": len(rows), "ATOM_OF": len(rows)}
        return built
