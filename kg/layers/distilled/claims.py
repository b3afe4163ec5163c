"""Leases on pending chunks, so several distillation workers (processes, or machines over one graph) work on
disjoint chunks without double work, and a killed worker's chunks are taken over.

A worker claims its next batch in one write transaction (:meth:`Claims.next`): it reads the next pending
chunks after its cursor that no live worker holds, locks each one and re-checks it under the lock, and
leases it (``Chunk.lease_owner``, ``Chunk.lease_until`` in server milliseconds). The batch's write ends the
lease (``distill/mark_chunks``), and a job that stops early gives back what it still holds
(:meth:`Claims.release`). A lease is live until it expires; a worker that finds nothing more to
claim also takes the chunks of owners on its own host whose process is gone (a killed ``strata distill``),
so a resumed run does not wait for their leases to expire. A chunk whose task failed loses its lease, and
the worker does not claim it again in the same run (:meth:`Claims.failed`).

A layer whose unit is larger than a chunk (the pseudo-graph's mind map) claims whole document parts: the chunks
of a document whose ``order // part_chunks`` is the same, so a document of any size is distilled in batches of
at most ``part_chunks`` of its chunks (or ``size``, whichever is larger) and never in one.

Only the chunk ids and texts of the batches in flight are in memory: the pending set is never read whole.
"""

from __future__ import annotations

import os
import socket
import time
import uuid
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field

from kg.layers.distilled.models import ChunkRecord
from kg.store.base import GraphStore, Transaction
from kg.store.queries import (
    CLAIM_CANDIDATES,
    CLAIM_CHUNKS,
    CLAIM_PARTS,
    LEASE_OWNERS,
    LOCK_SERIAL,
    PENDING_TOTAL,
    SERIAL_OWNER,
    ClaimCandidateRow,
)

__all__ = ["Claims", "SerialLock", "new_owner"]

_HELD_BATCHES = 4


def new_owner() -> str:
    """A worker's name: its host, its process id (for the liveness check) and a random part."""
    return f"{socket.gethostname()}/{os.getpid()}/{uuid.uuid4().hex[:8]}"


def _dead_on_this_host(owners: Sequence[str]) -> list[str]:
    """The owners that ran on this host in a process that no longer exists."""
    host = socket.gethostname()
    dead = []
    for owner in owners:
        parts = owner.split("/")
        if len(parts) != 3 or parts[0] != host or not parts[1].isdigit():
            continue
        try:
            os.kill(int(parts[1]), 0)
        except ProcessLookupError:
            dead.append(owner)
        except PermissionError:  # a live process of another user
            continue
    return dead


@dataclass
class Claims:
    """The batches one worker claims for one layer (see the module docstring): at most ``size`` chunks and, with
    ``chars``, at most that much chunk text (at least one chunk), since what a batch builds (atoms, facts and
    their vectors) grows with its text rather than its chunk count. With ``part_chunks``, a batch is whole
    document parts (every pending chunk of a document whose ``order // part_chunks`` is the same): as many as
    fit in ``size`` chunks, at least one."""

    store: GraphStore
    layer: str
    owner: str
    size: int
    document_ids: list[str] | None = None
    retry_failed: bool = True
    part_chunks: int | None = None
    chars: int | None = None
    lease_seconds: float = 3600.0
    _after: str = ""
    _dead: list[str] = field(default_factory=list)
    _swept: bool = False
    _failed: set[str] = field(default_factory=set)
    # The ids of the last batches claimed: at most those are still held (the job keeps fewer in flight).
    _held: deque[list[str]] = field(default_factory=lambda: deque(maxlen=_HELD_BATCHES))

    def release(self) -> None:
        """Give back the chunks this worker still holds (a job that stops early)."""
        ids = [i for batch in self._held for i in batch]
        if ids:
            self.store.write("distill/release_leases", ids=ids, owner=self.owner)

    def failed(self, ids: Sequence[str]) -> None:
        """Chunks this worker tried and failed: not claimed again in this run."""
        self._failed.update(ids)

    def pending(self) -> int:
        """Chunks the layer has still to distil (of every worker): the total progress is measured against."""
        rows = self.store.read(PENDING_TOTAL, layer=self.layer, document_ids=self.document_ids,
                               retry_failed=self.retry_failed)
        return int(rows[0]["pending"])

    def next(self) -> list[ChunkRecord]:
        """The next batch leased to this worker; empty when nothing is left that no live worker holds."""
        while True:
            last, batch = self.store.atomic(self._claim)
            if batch:
                self._after = last
                self._held.append([c.id for c in batch])
                return batch
            if last:  # every candidate was taken by another worker meanwhile: on to the next ones
                self._after = last
                continue
            if self._swept:
                return []
            # The end of a pass: once more from the start, taking over the chunks of dead workers on this
            # host and of expired leases that the pass went by.
            self._swept = True
            self._after = ""
            owners = [r["owner"] for r in self.store.read(LEASE_OWNERS, layer=self.layer,
                                                            document_ids=self.document_ids)]
            self._dead = _dead_on_this_host([o for o in owners if o != self.owner])

    def _claim(self, tx: Transaction) -> tuple[str, list[ChunkRecord]]:
        """The cursor's next value (the last candidate taken; empty when there was none) and the chunks leased."""
        params = {"layer": self.layer, "retry_failed": self.retry_failed, "dead_owners": self._dead}
        candidates = tx.run(CLAIM_CANDIDATES, after=self._after, document_ids=self.document_ids,
                            limit=self.size, exclude=sorted(self._failed), **params)
        if self.part_chunks is not None and candidates:
            ids, last = self._whole_parts(tx, candidates, params, self.part_chunks)
        else:
            ids = [r["id"] for r in _within(candidates, self.chars)]
            last = max(ids, default="")
        rows = tx.run(CLAIM_CHUNKS, ids=ids, owner=self.owner, lease_ms=int(self.lease_seconds * 1000),
                      layer=self.layer, dead_owners=self._dead)
        return last, [ChunkRecord(r["id"], r["document_id"], r["text"] or "", r["title"], r["order"], r["summary"])
                      for r in rows]

    def _whole_parts(self, tx: Transaction, candidates: list[ClaimCandidateRow], params: dict[str, object],
                     part_chunks: int) -> tuple[list[str], str]:
        """The pending chunks of the document parts the candidates reach, in candidate order for as long as they
        fit in ``size`` (the first part always), and the last candidate before the first part left out: the
        next claim starts there, so a part left out is not passed by."""
        def part_of(row: ClaimCandidateRow) -> tuple[str, int]:
            return row["document_id"], row["order"] // part_chunks

        reached = sorted({part_of(r) for r in candidates})
        members: dict[tuple[str, int], list[str]] = {}
        for r in tx.run(CLAIM_PARTS, parts=[{"document_id": d, "part": p} for d, p in reached],
                        part_chunks=part_chunks, **params):
            members.setdefault(part_of(r), []).append(r["id"])
        taken: list[tuple[str, int]] = []
        ids: list[str] = []
        last = ""
        for row in candidates:
            part = part_of(row)
            if part not in taken:
                if taken and len(ids) + len(members.get(part, [])) > self.size:
                    break
                taken.append(part)
                ids += members.get(part, [])
            last = row["id"]
        # Locked in id order, as every claim locks: two workers' claims never wait on each other in a cycle.
        return sorted(ids), last


def _within(candidates: list[ClaimCandidateRow], chars: int | None) -> list[ClaimCandidateRow]:
    """The candidates (in id order) whose text fits in ``chars`` together; the first one always.

    >>> rows = [{"id": n, "document_id": "d", "order": 0, "chars": 400} for n in "abc"]
    >>> [r["id"] for r in _within(rows, 900)], [r["id"] for r in _within(rows, 100)], len(_within(rows, None))
    (['a', 'b'], ['a'], 3)
    """
    if chars is None:
        return candidates
    total = 0
    for n, row in enumerate(candidates):
        total += row["chars"]
        if total > chars and n > 0:
            return candidates[:n]
    return candidates


# How long a worker waits between tries for the serial lock another worker holds.
_SERIAL_POLL_S = 0.05


@dataclass
class SerialLock:
    """The job-wide lock of a layer whose batches read what earlier batches wrote (entity resolution reads
    the entities earlier batches created). A worker takes it before that read (:meth:`acquire`) and gives it
    back in the transaction that writes the batch (``distill/unlock_serial``, :meth:`release_in`), so workers
    resolve one batch at a time against everything committed before: the graph is the one a single worker
    builds, whichever worker took which batch. Their extraction (the LLM calls) still runs side by side. The
    lock is a property of the ``StrataMeta`` node, with an expiry, taken over from a dead worker on this host
    at once."""

    store: GraphStore
    owner: str
    lease_seconds: float = 3600.0

    def acquire(self) -> None:
        dead: list[str] = []
        while not self.store.write(LOCK_SERIAL, owner=self.owner, lease_ms=int(self.lease_seconds * 1000),
                                   dead_owners=dead):
            holder = self.store.read(SERIAL_OWNER)
            dead = _dead_on_this_host([r["owner"] for r in holder if r["owner"] is not None])
            if not dead:
                time.sleep(_SERIAL_POLL_S)

    def release_in(self, tx: Transaction) -> None:
        tx.run("distill/unlock_serial", owner=self.owner)

    def release(self) -> None:
        self.store.write("distill/unlock_serial", owner=self.owner)
