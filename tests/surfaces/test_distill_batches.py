"""The client distils in batches of ``DISTILL_BATCH_CHUNKS`` unless told otherwise, not in the writer's batch
size: the batch sets how many write transactions, and so how many vector index segments, a distillation leaves.
A batch also holds at most ``DistillConfig.batch_chars`` of chunk text, which bounds its memory."""

from __future__ import annotations

from collections.abc import Callable
from itertools import pairwise
from pathlib import Path

import pytest

from kg.app.client import Strata
from kg.layers.distilled import DistillConfig, pipeline

CHUNKS = 10


def _batches(kb: Strata, batch_size: int | None = None, batch_chars: int | None = None) -> list[int]:
    done: list[int] = []
    config = DistillConfig(batch_chars=batch_chars) if batch_chars is not None else None
    kb.distill(layers=["atoms"], force=True, batch_size=batch_size, config=config,
               progress=lambda _layer, finished, _total: done.append(finished))
    return [b - a for a, b in pairwise(done)]


def test_the_client_distils_in_its_own_batches_unless_told(make_kb: Callable[[str], Strata], tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pipeline, "DISTILL_BATCH_CHUNKS", 4)
    kb = make_kb("default")  # its writer's batch_size is 100
    sections = [f"## Harbour {n}\n\nThe harbour of Port {n} opened in {1900 + n}. Its pier was built by Mason {n}."
                for n in range(CHUNKS)]
    path = tmp_path / "harbours.md"
    path.write_text("# Harbours\n\n" + "\n\n".join(sections) + "\n", "utf-8")
    kb.load([path])
    assert kb.stats().nodes["Chunk"] == CHUNKS

    assert _batches(kb) == [4, 4, 2]
    assert _batches(kb, batch_size=3) == [3, 3, 3, 1]
    # Each chunk holds 68 characters of text: a batch takes the chunks whose text fits, at least one.
    assert _batches(kb, batch_chars=250) == [3, 3, 3, 1]
    assert _batches(kb, batch_size=2, batch_chars=250) == [2, 2, 2, 2, 2]
    assert _batches(kb, batch_chars=10) == [1] * CHUNKS
