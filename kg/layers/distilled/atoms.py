"""Knowledge atomizing (PIKE-RAG 5.3.1): the questions each chunk answers, or offline its statements.

With an LLM, each chunk gets the atomic questions it answers (``atomic_questions`` task, temperature
``atom_temperature``, 0.7 by default as the paper samples diverse questions); offline, its atomic
statements (sentences, long ones cut at clause boundaries). Atoms are de-duplicated per chunk on their
normalised text, embedded in one call per batch and written as
``(:Atom {kind, text, source, embedding})-[:ATOM_OF]->(:Chunk)``.
"""

from __future__ import annotations

from collections.abc import Sequence

from kg.layers.distilled.base import Built, Layer, call_many, short_hash
from kg.layers.distilled.models import ChunkRecord
from kg.layers.distilled.text import statements, text_key
from kg.llm import AtomicQuestions

__all__ = ["AtomsLayer"]


class AtomsLayer(Layer):
    name = "atoms"
    llm_tasks = ("atomic_questions",)
    independent_batches = True
    clear = ("distill/clear_atoms",)

    def build(self, chunks: Sequence[ChunkRecord]) -> Built:
        built = Built()
        per_chunk: list[tuple[ChunkRecord, list[str]]] = []
        if self.ctx.offline:
            kind, source = "statement", "offline"
            per_chunk = [(c, statements(c.text, max_words=self.ctx.config.statement_max_words)) for c in chunks]
        else:
            kind, source = "question", "llm"
            outcome = call_many(self.ctx, "atomic_questions", AtomicQuestions,
                                [{"title": c.title, "chunk": c.text} for c in chunks],
                                temperature=self.ctx.config.atom_temperature)
            built.absorb(outcome)
            for i, chunk in enumerate(chunks):
                if i in outcome.errors:
                    built.fail(self.name, [chunk.id], outcome.errors[i])
                else:
                    per_chunk.append((chunk, list(outcome.results[i].questions)))
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
                row["embedding"] = vector.tolist()
        built.rows.append(("distill/create_atoms", rows))
        built.counts = {"Atom": len(rows), "ATOM_OF": len(rows)}
        return built
