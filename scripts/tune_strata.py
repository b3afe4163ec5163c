"""Recall of ``strata`` variants on one set of the retrieval suite, on its kept evaluation server.

The suite's rule (docs/retrieval.md): tune on the ``tune`` set, then report every set with
``strata eval retrieval --suite``. This script is the tuning loop: it reuses the graph that
``strata eval retrieval --suite DIR --kb KB`` kept for set SET (server ``KB-SET``), and prints recall@2/5/10
and ms per query of each variant, a variant being a JSON object of ``strata`` settings::

    STRATA_HOME=... python scripts/tune_strata.py tests/data/retrieval_suite hotpotqa --kb dev \\
        '{}' '{"rounds": 1}' '{"weights": {"rounds": 1.0}}'
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from kg.app.evaluation.retrieval import Ranked, passage_recall
from kg.app.evaluation.runner import corpus_documents, isolated_store
from kg.app.evaluation.suite import Suite
from kg.embeddings import make_embedder
from kg.retrieval import make_retriever
from kg.settings import Settings
from kg.shared.ids import document_id
from loaders import load_questions
from loaders.qa import passage_key


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("suite", type=Path)
    parser.add_argument("set")
    parser.add_argument("variants", nargs="+", help="JSON objects of strata settings")
    parser.add_argument("--kb", required=True)
    parser.add_argument("--method", default="strata")
    args = parser.parse_args()
    suite = Suite.read(args.suite)
    entry = next(s for s in suite.sets if s.name == args.set)
    dataset = suite.path(entry.dataset)
    questions = [q for q in load_questions(dataset) if q.gold_passages]
    docs = corpus_documents(dataset, suite.path(entry.corpus) if entry.corpus else None)
    passage_of = {document_id(d.source): passage_key(d.title, d.text) for d in docs}
    settings = Settings.from_env()
    embedder = make_embedder(settings.embedder, cache_dir=settings.cache_dir)
    with isolated_store(settings, embedder, kb=f"{args.kb}-{entry.name}") as store:
        for variant in args.variants:
            retriever = make_retriever(args.method, store, embedder, **json.loads(variant))
            recall = {2: 0.0, 5: 0.0, 10: 0.0}
            started = time.perf_counter()
            for q in questions:
                hits = retriever.retrieve(q.question, k=30)
                ranked = [Ranked(passage=passage_of.get(h.document_id, h.document_id)) for h in hits]
                for k in recall:
                    recall[k] += passage_recall(ranked, q.gold_passages, k) or 0.0
            ms = 1000 * (time.perf_counter() - started) / len(questions)
            print(json.dumps({"set": entry.name, "variant": json.loads(variant), "ms": round(ms, 1),
                              **{f"R@{k}": round(v / len(questions), 4) for k, v in recall.items()}}), flush=True)


if __name__ == "__main__":
    main()
