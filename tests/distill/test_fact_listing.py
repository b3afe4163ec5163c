"""A mind-map prompt lists a document's facts within a token budget: all when they fit, else an even sample."""

from __future__ import annotations

import itertools

import pytest

from kg.layers.distilled.text import fact_listing
from kg.shared.text import estimate_tokens

FACTS = [f"Pump {n} was serviced in week {n} by the night shift" for n in range(1, 101)]


def test_facts_that_fit_are_all_listed_in_order() -> None:
    assert fact_listing(FACTS[:3], 1000) == "\n".join(f"- {f}" for f in FACTS[:3])


@pytest.mark.parametrize("budget", [40, 200, 700])
def test_facts_over_the_budget_are_an_even_sample_from_first_to_last_within_it(budget: int) -> None:
    listing = fact_listing(FACTS, budget)
    shown = [line.removeprefix("- ") for line in listing.splitlines()]
    assert estimate_tokens(listing) <= budget and 1 < len(shown) < len(FACTS)
    assert shown[0] == FACTS[0] and shown[-1] == FACTS[-1]
    positions = [FACTS.index(f) for f in shown]
    gaps = [b - a for a, b in itertools.pairwise(positions)]
    assert positions == sorted(positions) and max(gaps) - min(gaps) <= 1  # evenly spread


def test_a_budget_below_one_fact_still_shows_one() -> None:
    assert fact_listing(FACTS, 1) == f"- {FACTS[0]}"
