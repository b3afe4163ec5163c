"""AsyncStrata over the real Neo4j (offline): load, distill, retrieve, ask, find and delete from asyncio code."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from kg.app.client import AsyncStrata, Strata
from kg.app.demo import CORPUS


def test_async_client_loads_distills_retrieves_asks_and_deletes(make_kb: Callable[[str], Strata]) -> None:
    policy = CORPUS / "maintenance-policy.html"

    async def run() -> None:
        async with AsyncStrata(make_kb("default")) as kb:
            loaded = await kb.load([policy])
            assert [f.status for f in loaded.files] == ["loaded"]

            distilled = await kb.distill(layers=["atoms", "tables"])
            assert set(distilled.layers) == {"atoms", "tables"} and distilled.layers["atoms"].created["Atom"] > 0
            assert (await kb.stats()).nodes["Atom"] == distilled.layers["atoms"].created["Atom"]

            # Two questions at once: each runs in its own worker thread against the same driver.
            hits, answer = await asyncio.gather(kb.retrieve("gearbox oil sampled", k=2),
                                                kb.ask("How often is gearbox oil sampled?"))
            assert 1 <= len(hits) <= 2 and "Gearbox oil is sampled every 6 months" in hits[0].text
            assert "every 6 months" in answer.answer and answer.citations
            assert answer.citations[0].title == "Borealis Wind maintenance policy"

            [doc] = await kb.documents()
            assert await kb.find(str(policy)) == doc
            assert (await kb.delete(doc.id)).id == doc.id
            assert await kb.documents() == [] and await kb.find(doc.id) is None

    asyncio.run(run())
