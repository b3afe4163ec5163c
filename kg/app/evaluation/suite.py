"""``strata eval retrieval --suite DIR``: every set of a development suite, one table of methods x sets.

A suite is a folder with a ``suite.json`` manifest, ``{"sets": [{"name", "dataset", "corpus", "role",
"construction"}]}``, its paths relative to the folder (scripts/make_suite.py builds Strata's own:
docs/retrieval.md, "The development suite"). ``role`` is ``tune`` for the one set changes are tuned on and
``report`` for the others; the rule is that a change is kept only when no set loses more than 0.01 at recall@5.

Each set runs as ``strata eval retrieval`` runs it, in its own throwaway store. The suite adds, per set and
method, recall@k's ratio to ``bm25`` and to ``dense`` of the same run, and recall@k per hop count (the number of
gold passages a question has), read from the per-question ranks.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from kg.app.evaluation.retrieval import RetrievalEvalConfig, RetrievalReport, run_retrieval_eval
from kg.embeddings import Embedder
from kg.errors import LoaderError
from kg.llm import LLM
from kg.settings import Settings

__all__ = ["MANIFEST", "SetResult", "Suite", "SuiteReport", "SuiteSet", "hop_recalls", "ratios", "run_suite"]

MANIFEST = "suite.json"


class SuiteSet(BaseModel):
    """One set of a suite: its questions, its corpus (None: the questions' own paragraphs) and its role."""

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    dataset: Path
    corpus: Path | None = None
    role: Literal["tune", "report"] = "report"
    construction: str = ""


class Suite(BaseModel):
    root: Path
    sets: list[SuiteSet]

    @classmethod
    def read(cls, folder: Path) -> Suite:
        """The suite in ``folder``; a missing manifest, an invalid field or a missing file names itself."""
        manifest = folder / MANIFEST
        if not manifest.is_file():
            raise LoaderError(str(manifest), "no suite manifest (a suite folder holds suite.json)")
        try:
            raw = json.loads(manifest.read_text("utf-8"))
        except json.JSONDecodeError as exc:
            raise LoaderError(str(manifest), f"invalid JSON: {exc.msg}", f"line {exc.lineno}") from exc
        try:
            suite = cls.model_validate({"root": folder, "sets": raw.get("sets") if isinstance(raw, dict) else raw})
        except ValidationError as exc:
            error = exc.errors()[0]
            raise LoaderError(str(manifest), error["msg"], ".".join(str(p) for p in error["loc"])) from exc
        names = [s.name for s in suite.sets]
        if not names:
            raise LoaderError(str(manifest), "the suite has no sets", "sets")
        if len(set(names)) != len(names):
            raise LoaderError(str(manifest), "set names repeat", "sets")
        for i, entry in enumerate(suite.sets):
            for field, path in (("dataset", entry.dataset), ("corpus", entry.corpus)):
                if path is not None and not (folder / path).is_file():
                    raise LoaderError(str(manifest), f"no file {folder / path}", f"sets.{i}.{field}")
        return suite

    def path(self, relative: Path) -> Path:
        return self.root / relative


class SetResult(BaseModel):
    """One set's report, with each method's ratios to the baselines and recall per hop count."""

    name: str
    role: str
    construction: str
    report: dict[str, Any]  # RetrievalReport.to_json()
    ratios: dict[str, dict[str, float | None]]  # method -> {"bm25@5": ..., "dense@5": ...}
    hops: dict[str, int]  # scored questions per hop count
    by_hops: dict[str, dict[str, dict[str, float | None]]]  # method -> hop count -> recall@k


class SuiteReport(BaseModel):
    suite: str
    ks: list[int]
    sets: list[SetResult]


def ratios(results: dict[str, dict[str, float | None]], ks: Sequence[int]) -> dict[str, dict[str, float | None]]:
    """Each method's recall@k over ``bm25``'s and over ``dense``'s (None: that baseline did not run or found 0)."""
    out: dict[str, dict[str, float | None]] = {}
    for method, scores in results.items():
        row: dict[str, float | None] = {}
        for baseline in ("bm25", "dense"):
            for k in ks:
                base = results.get(baseline, {}).get(f"recall@{k}")
                mine = scores.get(f"recall@{k}")
                row[f"{baseline}@{k}"] = round(mine / base, 3) if base and mine is not None else None
        out[method] = row
    return out


def hop_recalls(report: RetrievalReport, ks: Sequence[int]) -> tuple[dict[str, int],
                                                                       dict[str, dict[str, dict[str, float | None]]]]:
    """Scored questions per hop count (gold passages per question), and each method's recall@k per hop count."""
    scored = [q for q in report.questions if q.gold]
    counts: dict[str, int] = {}
    for q in scored:
        counts[str(len(q.gold))] = counts.get(str(len(q.gold)), 0) + 1
    by_hops: dict[str, dict[str, dict[str, float | None]]] = {}
    for method in report.results:
        per: dict[str, dict[str, float | None]] = {}
        for hops, n in sorted(counts.items(), key=lambda item: int(item[0])):
            group = [q.methods[method].gold_ranks for q in scored if str(len(q.gold)) == hops]
            per[hops] = {f"recall@{k}": round(sum(sum(1 for r in ranks if r is not None and r <= k) / len(ranks)
                                                  for ranks in group) / n, 4) for k in ks}
        by_hops[method] = per
    return dict(sorted(counts.items(), key=lambda item: int(item[0]))), by_hops


def run_suite(suite: Suite, *, ks: Sequence[int], methods: Sequence[str], limit: int | None, kb: str | None,
              settings: Settings, embedder: Embedder, llm: LLM,
              progress: Callable[[str], None] | None = None,
              per_set: Callable[[SuiteSet, RetrievalReport], None] | None = None) -> SuiteReport:
    """Every set of ``suite``, in order, each in its own store (``kb``: kept servers named ``KB-SET``)."""
    say = progress or (lambda _msg: None)
    results = []
    for entry in suite.sets:
        say(f"== {entry.name} ({entry.role}): {entry.construction}")
        config = RetrievalEvalConfig(dataset=suite.path(entry.dataset),
                                     corpus=suite.path(entry.corpus) if entry.corpus else None,
                                     ks=list(ks), methods=list(methods), limit=limit,
                                     kb=f"{kb}-{entry.name}" if kb else None)
        report = run_retrieval_eval(config, settings, embedder, llm, progress=say)
        if per_set is not None:
            per_set(entry, report)
        hops, by_hops = hop_recalls(report, config.ks)
        results.append(SetResult(name=entry.name, role=entry.role, construction=entry.construction,
                                 report=report.to_json(), ratios=ratios(report.results, config.ks), hops=hops,
                                 by_hops=by_hops))
    return SuiteReport(suite=str(suite.root), ks=sorted(set(ks)), sets=results)
