"""Leases on pending chunks: which a worker may claim."""

from __future__ import annotations

from pathlib import Path

from neo4j import RoutingControl

from kg.layers.distilled.claims import Claims, new_owner
from kg.store.base import GraphStore
from tests.distill.conftest import load_passages


def test_a_lease_without_an_owner_is_claimable_and_a_live_foreign_lease_is_not(kb: GraphStore,
                                                                              tmp_path: Path) -> None:
    load_passages(kb, tmp_path, {f"Passage {n}": f"Turbine T-{n} had its gearbox repaired." for n in range(3)})
    ids = [r["id"] for r in kb.query("MATCH (c:Chunk) RETURN c.id AS id ORDER BY id")]
    assert len(ids) == 3
    # The first as a read can find it while the commit that ends a lease is applied (CI met it); the second
    # held by a live worker elsewhere.
    lease = "MATCH (c:Chunk {id: $id}) SET c.lease_until = timestamp() + 3600000, c.lease_owner = $owner"
    kb.query(lease, id=ids[0], owner=None, routing=RoutingControl.WRITE)
    kb.query(lease, id=ids[1], owner="elsewhere/1/ab", routing=RoutingControl.WRITE)

    claims = Claims(kb, "atoms", new_owner(), size=10)
    claimed = [c.id for batch in iter(claims.next, []) for c in batch]

    assert sorted(claimed) == [ids[0], ids[2]]
