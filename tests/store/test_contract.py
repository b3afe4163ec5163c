"""The :class:`~kg.store.base.GraphStore` contract, against the real Neo4j: typed reads routed to readers,
writes, batched writes in one transaction per ``UNWIND`` batch, atomic units that commit all or nothing; and
:class:`kg.testing.FailingStore`, which keeps that contract while injecting faults."""

from __future__ import annotations

from typing import Any

import pytest
from neo4j import RoutingControl

from kg.errors import Neo4jUnavailable, QueryError
from kg.store.base import GraphStore, Transaction
from kg.store.queries import COUNT_LABEL, META_READ, TAGS_EXISTING
from kg.testing import FailingStore

pytestmark = pytest.mark.neo4j

MERGE_TAGS = "distill/merge_tags"  # UNWIND $rows AS row MERGE (t:Tag {id: row.id}) ...


def tag(n: int, **changes: Any) -> dict[str, Any]:
    return {"id": f"tag-{n}", "name": f"Tag {n}", "class": "test", "name_key": f"tag {n}", "source": "contract",
            "aliases": [], "alias_keys": [], **changes}


def tags(store: GraphStore, *numbers: int) -> list[str]:
    return sorted(row["id"] for row in store.read(TAGS_EXISTING, ids=[f"tag-{n}" for n in numbers]))


def test_write_then_typed_read(store: GraphStore) -> None:
    store.write("meta/write", schema_version=7, embedder="contract-embedder", dimensions=3)
    rows = store.read(META_READ)
    assert rows == [{"schema_version": 7, "embedder": "contract-embedder", "dimensions": 3}]
    assert rows[0]["embedder"] == "contract-embedder"


def test_a_rendered_template_reads_with_its_row_type(store: GraphStore) -> None:
    store.write_batches(MERGE_TAGS, [tag(1), tag(2)])
    assert store.read(COUNT_LABEL.render(label="Tag"))[0]["count"] == 2
    with pytest.raises(ValueError, match="allow-list"):
        COUNT_LABEL.render(label="Tag) DETACH DELETE (x")


def test_reads_are_routed_as_reads(store: GraphStore) -> None:
    """A read runs in read access mode: a write sent through :meth:`read` is refused and changes nothing."""
    with pytest.raises(QueryError):
        store.read(MERGE_TAGS, rows=[tag(1)])
    assert tags(store, 1) == []
    assert store.read("meta/ping") == [{"ok": 1}]


def test_write_batches_unwinds_in_one_transaction_per_batch(store: GraphStore) -> None:
    assert store.write_batches(MERGE_TAGS, [tag(n) for n in range(5)], batch_size=2) == 5
    assert tags(store, *range(5)) == [f"tag-{n}" for n in range(5)]
    store.run_autocommit("meta/wipe")
    # A map is no property value: the batch holding row 4 fails; the two batches before it committed.
    with pytest.raises(QueryError):
        store.write_batches(MERGE_TAGS, [tag(n) for n in range(4)] + [tag(4, name={"not": "a value"})],
                            batch_size=2)
    assert tags(store, *range(5)) == [f"tag-{n}" for n in range(4)]


def test_atomic_commits_all_and_returns_the_result(store: GraphStore) -> None:
    def work(tx: Transaction) -> int:
        created = tx.run_batches(MERGE_TAGS, [tag(n) for n in range(3)], batch_size=2)
        assert [r["id"] for r in tx.run(TAGS_EXISTING, ids=["tag-0", "tag-2"])] == ["tag-0", "tag-2"]
        return created

    assert store.atomic(work) == 3
    assert tags(store, 0, 1, 2) == ["tag-0", "tag-1", "tag-2"]


def test_atomic_rolls_back_when_the_work_fails(store: GraphStore) -> None:
    def work(tx: Transaction) -> None:
        tx.run(MERGE_TAGS, rows=[tag(1), tag(2)])
        raise RuntimeError("the work failed after writing")

    with pytest.raises(RuntimeError, match="after writing"):
        store.atomic(work)
    assert tags(store, 1, 2) == []


def test_atomic_rolls_back_when_a_statement_fails(store: GraphStore) -> None:
    def work(tx: Transaction) -> None:
        tx.run(MERGE_TAGS, rows=[tag(1)])
        tx.run(MERGE_TAGS, rows=[tag(2, name={"not": "a value"})])

    with pytest.raises(QueryError):
        store.atomic(work)
    assert tags(store, 1, 2) == []


# -- FailingStore -------------------------------------------------------------------------------------------


def test_failing_store_fails_the_named_query_as_often_as_told(store: GraphStore) -> None:
    failing = FailingStore(store, fail_on=MERGE_TAGS, times=1)
    with pytest.raises(Neo4jUnavailable, match=f"injected fault: {MERGE_TAGS}"):
        failing.write_batches(MERGE_TAGS, [tag(1)])
    assert tags(failing, 1) == []  # never sent
    failing.write_batches(MERGE_TAGS, [tag(1)])
    assert tags(failing, 1) == ["tag-1"]
    assert failing.failures == 1 and failing.calls == [MERGE_TAGS, TAGS_EXISTING.name, MERGE_TAGS,
                                                       TAGS_EXISTING.name]


def test_failing_store_after_the_call_loses_only_the_answer(store: GraphStore) -> None:
    failing = FailingStore(store, fail_on=TAGS_EXISTING, times=None, after=True, error=QueryError("lost"))
    failing.write_batches(MERGE_TAGS, [tag(1)])
    for _ in range(2):
        with pytest.raises(QueryError, match="lost"):
            tags(failing, 1)
    assert tags(store, 1) == ["tag-1"] and failing.failures == 2


def test_failing_store_inside_atomic_rolls_the_unit_back(store: GraphStore) -> None:
    failing = FailingStore(store, fail_on=lambda name: name == TAGS_EXISTING.name)

    def work(tx: Transaction) -> None:
        tx.run(MERGE_TAGS, rows=[tag(1)])
        tx.run(TAGS_EXISTING, ids=["tag-1"])

    with pytest.raises(Neo4jUnavailable):
        failing.atomic(work)
    assert tags(store, 1) == []
    failing.atomic(work)  # the fault was used up: the same unit now commits
    assert tags(store, 1) == ["tag-1"]


def test_rows_come_back_as_the_driver_exports_them(store: GraphStore) -> None:
    # Rows are converted without the driver's generic walk; whatever a query returns (scalars, nested lists
    # and maps, nodes, relationships, paths, temporal values) must come back as record.data() gives it.
    # Run twice (by the driver, then by the store): MERGE, so the second run finds what the first made.
    text = ("MERGE (a:Tag {id: 'row-a'}) SET a.n = 1 MERGE (b:Tag {id: 'row-b'}) SET b.n = [1, 2] "
            "MERGE (a)-[r:SIMILAR]->(b) SET r.w = 0.5 WITH a, r, b MATCH p = (a)-[r]->(b) "
            "RETURN 1 AS i, 2.5 AS f, 's' AS s, null AS z, true AS t, [1, [2, {k: 'v'}]] AS nested, "
            "{m: [a.id, {deep: [b.n]}]} AS map, a AS node, r AS rel, p AS path, [a, b] AS nodes, "
            "{n: b} AS node_in_map, date('2026-11-27') AS day")
    driver = store.driver  # type: ignore[attr-defined]
    with driver.session(database=store.database) as session:  # type: ignore[attr-defined]
        expected = [record.data() for record in session.run(text)]
    rows = store.query(text, routing=RoutingControl.WRITE)
    assert rows == expected
    assert rows[0]["node"] == {"id": "row-a", "n": 1} and rows[0]["node_in_map"] == {"n": {"id": "row-b", "n": [1, 2]}}


def test_rows_sent_are_not_formatted_for_the_drivers_debug_log(store: GraphStore,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    # The driver formats each message's parameters for its debug log before checking the level: rows of text
    # and vectors were most of the client's CPU in distillation, and a debug log would have held document text.
    # Lists go as lists whose repr is their length, in every way the store sends them.
    marker = "Zanzibar-7319"
    with caplog.at_level("DEBUG", logger="neo4j"):
        store.write_batches(MERGE_TAGS, [tag(1, name=marker)])
        store.atomic(lambda tx: tx.run_batches(MERGE_TAGS, [tag(2, name=marker)]))
        store.atomic(lambda tx: tx.run(TAGS_EXISTING, ids=[marker]))
        found = tags(store, 1, 2)
    assert found == ["tag-1", "tag-2"]
    assert "C: RUN" in caplog.text and "<1 values>" in caplog.text
    assert marker not in caplog.text
