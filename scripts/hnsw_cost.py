"""What a vector costs a Neo4j vector index to write and then to merge, by index config, and the recall it keeps.

    .venv/bin/python scripts/hnsw_cost.py 100000 '{"default": {}, "ef32": {"vector.hnsw.ef_construction": 32}}'

For each named config (extra ``indexConfig`` entries) a throwaway local server (3 GB heap, 4 GB page cache) gets
N statement vectors of ``bench query``'s generated passages (the configured embedder), 2,000 a transaction, into
one vector index; printed per config: the server's CPU per vector during the writes and while it merged after
them (until quiet), the merge seconds, recall@10 of the index against the exact top 10 for 200 queries (sentences
of other passages) and the query p50. docs/scaling.md, "What the distilled layer costs", has a run.
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np
import psutil
from neo4j import GraphDatabase

from kg.app.bench.query import generate_passages
from kg.embeddings import make_embedder
from kg.provisioning.throwaway import throwaway_local_server
from kg.settings import Settings
from kg.shared.processes import await_quiet, cpu_seconds

BATCH = 2000
QUERIES = 200
K = 10
WRITE = ("UNWIND $rows AS r CREATE (n:HnswCost {id: r.id}) WITH n, r "
         "CALL db.create.setNodeVectorProperty(n, 'embedding', r.v)")
SEARCH = "CALL db.index.vector.queryNodes('hnsw_cost', $k, $v) YIELD node RETURN node.id AS id"


def main(count: int, configs: dict[str, dict[str, object]]) -> dict[str, dict[str, float]]:
    settings = Settings.from_env()
    embedder = make_embedder(settings.embedder, cache_dir=settings.cache_dir)
    texts = [s.strip() + "." for d in generate_passages(count // 3 + 1) for s in d.text.split(".") if s.strip()]
    texts = texts[:count]
    vectors = embedder.embed(texts)
    queries = embedder.embed([d.text.split(".")[1].strip() for d in generate_passages(QUERIES, start=10_000_000)])
    exact = np.argsort(-(queries @ vectors.T), axis=1)[:, :K]
    report = {}
    for name, extra in configs.items():
        with throwaway_local_server(settings, heap="3g", pagecache="4g") as (_, info):
            if info.pid is None:
                raise SystemExit(f"the server in {info.home} runs without a pid file to sample")
            server = psutil.Process(info.pid)
            config = {"vector.dimensions": embedder.dimensions, "vector.similarity_function": "cosine", **extra}
            with GraphDatabase.driver(info.bolt_uri, auth=(info.user, info.password)) as driver, \
                    driver.session() as session:
                session.run("CREATE VECTOR INDEX hnsw_cost IF NOT EXISTS FOR (n:HnswCost) ON n.embedding "
                            "OPTIONS {indexConfig: $config}", config=config).consume()
                session.run("CALL db.awaitIndexes(300)").consume()
                cpu, started = cpu_seconds(server), time.perf_counter()
                for i in range(0, count, BATCH):
                    rows = [{"id": j, "v": vectors[j].tolist()} for j in range(i, min(count, i + BATCH))]
                    session.run(WRITE, rows=rows).consume()
                write_s, write_cpu = time.perf_counter() - started, cpu_seconds(server) - cpu
                cpu = cpu_seconds(server)
                merge_s, _ = await_quiet(info.pid)
                merge_cpu = cpu_seconds(server) - cpu
                found, latencies = 0, []
                for vector, best in zip(queries, exact, strict=True):
                    started = time.perf_counter()
                    ids = {r["id"] for r in session.run(SEARCH, k=K, v=vector.tolist())}
                    latencies.append(time.perf_counter() - started)
                    found += len(ids & set(best.tolist()))
        report[name] = {"write_s": round(write_s, 1),
                        "server_cpu_ms_per_vector_write": round(write_cpu * 1000 / count, 3),
                        "server_cpu_ms_per_vector_merge": round(merge_cpu * 1000 / count, 3),
                        "merge_s": round(merge_s, 1), "recall_at_10_vs_exact": round(found / (K * QUERIES), 4),
                        "query_p50_ms": round(float(np.median(latencies)) * 1000, 2)}
        print(name, report[name], file=sys.stderr, flush=True)
    return report


if __name__ == "__main__":
    print(json.dumps(main(int(sys.argv[1]), json.loads(sys.argv[2]))))
