"""Multi-round retrieval: bridge names from a seed's best sentences, and a second round on the real Neo4j that
finds what the first round and the title links cannot."""

from __future__ import annotations

from pathlib import Path

from kg.retrieval import Hit, HitSource, make_retriever
from kg.retrieval.common import query_vector
from kg.retrieval.rounds import bridge_names, chained, next_round
from kg.store.base import GraphStore
from tests.retrieval.conftest import EMBEDDER, load_passages

FILM = ("The Toast of New Orleans is a 1950 MGM musical film directed by Norman Taurog and choreographed by "
        "Eugene Loring. It stars Mario Lanza, Kathryn Grayson and David Niven.")


def _hit(text: str, title: str = "The Toast of New Orleans") -> Hit:
    return Hit(chunk_id="c", document_id="d", title=title, char_start=0, char_end=len(text), text=text, score=1.0)


def test_bridge_names_come_from_the_sentence_the_question_matches_first() -> None:
    question = "Which country is the person who directed the 1950 MGM musical film from?"
    assert bridge_names(question, _hit(FILM)) == ["Norman Taurog", "Eugene Loring"]
    # The cast's sentence shares no word with the question: its names come after the first sentence's.
    assert bridge_names(question, _hit(FILM), limit=4) == ["Norman Taurog", "Eugene Loring", "Mario Lanza",
                                                          "Kathryn Grayson"]
    assert bridge_names(question, _hit(FILM), sentences=1, limit=4) == ["Norman Taurog", "Eugene Loring"]


def test_names_the_question_or_the_seed_already_hold_are_no_bridges() -> None:
    text = "In March 1950 The Toast of New Orleans opened. Norman Taurog directed it for MGM."
    assert bridge_names("Who directed The Toast of New Orleans for MGM?", _hit(text)) == ["Norman Taurog"]
    assert bridge_names("Where was MGM's Norman Taurog born?", _hit(text), limit=5) == []
    assert bridge_names("anything", _hit("no capitalised word at all here.")) == []
    # A sentence ends before a capital, except after an initial; a name never spans two sentences.
    text = "Newburgh is in Orange County. It stars J. Carrol Naish."
    assert bridge_names("Which Newburgh?", _hit(text, title="Newburgh"), limit=3) == ["Orange County",
                                                                                     "J. Carrol Naish"]


PASSAGES = {
    "Arthur's Magazine": "Arthur's Magazine was an American literary periodical published in Philadelphia. "
                         "It was edited by Timothy Shay Arthur.",
    "Biography 17": "Timothy Shay Arthur, a writer of temperance novels, was born in Newburgh, New York.",
    "Newburgh": "Newburgh is a city in Orange County. It lies on the Hudson River.",
    "Philadelphia": "Philadelphia is the largest city in Pennsylvania.",
    "Temperance": "The temperance movement opposed the drinking of alcohol; novels carried its message.",
    # Distractors that share the question's words, as the second hop does not.
    "Edgar Allan Poe": "Edgar Allan Poe was an American writer born in Boston, published in Philadelphia.",
    "Abraham Lincoln": "Abraham Lincoln was an American president born in Kentucky.",
}
QUESTION = "Where was the editor of the American literary periodical published in Philadelphia born?"
# Title links off (follow=0, no named_by): what the second round finds, it finds by itself.
NO_LINKS = {"follow": 0, "weights": {"named_by": 0.0}}


def test_a_second_round_follows_the_bridge_the_first_round_read(store: GraphStore, tmp_path: Path) -> None:
    corpus = load_passages(store, tmp_path, PASSAGES)
    one_round = make_retriever("strata", store, EMBEDDER, rounds=1, **NO_LINKS).retrieve(QUESTION, k=3)
    assert "Biography 17" not in [h.title for h in one_round]
    assert not any(s.path.startswith("round") for h in one_round for s in h.sources)
    hits = make_retriever("strata", store, EMBEDDER, rounds=2, round_after=0, **NO_LINKS).retrieve(QUESTION, k=3)
    titles = [h.title for h in hits]
    assert titles.index("Biography 17") == titles.index("Arthur's Magazine") + 1, titles
    biography = hits[titles.index("Biography 17")]
    assert [(s.path, s.via, s.via_id) for s in biography.sources] == [
        ("round2", "Timothy Shay Arthur", corpus.chunks["Arthur's Magazine"])]
    assert biography.explain().startswith("round2 ") and "via 'Timothy Shay Arthur'" in biography.explain()
    # Not before round one's first `round_after` results: those two stay where they were.
    after_two = make_retriever("strata", store, EMBEDDER, rounds=2, round_after=2, **NO_LINKS).retrieve(QUESTION, k=3)
    assert [h.chunk_id for h in after_two[:2]] == [h.chunk_id for h in one_round[:2]]
    # The probe requires the bridge: a passage without it is not a second-round hit, nor is the seed itself.
    magazine = hits[titles.index("Arthur's Magazine")]
    [probe] = next_round(store, QUESTION, [magazine], query_vector(EMBEDDER, QUESTION), number=2, bridges=1)
    assert [h.title for h in probe] == ["Biography 17"]
    # A name that more passages hold than `specific` is a common word: its probe finds nothing.
    assert next_round(store, QUESTION, [magazine], query_vector(EMBEDDER, QUESTION), number=2, bridges=1,
                      specific=1) == [[]]


def test_no_bridge_means_no_second_round_trip(store: GraphStore, tmp_path: Path) -> None:
    load_passages(store, tmp_path, PASSAGES)
    hits = make_retriever("strata", store, EMBEDDER, rounds=1).retrieve("Newburgh city Orange County", k=5)
    seed = next(h for h in hits if h.title == "Newburgh")
    assert next_round(store, "Which Newburgh lies in Orange County on the Hudson River?", [seed],
                      query_vector(EMBEDDER, "Newburgh"), number=2) == []


def _ranked(chunk: str, score: float, *, bridge_of: str | None = None) -> Hit:
    sources = [HitSource(path="bridge", score=score, via_id=bridge_of)] if bridge_of else []
    return Hit(chunk_id=chunk, document_id=chunk, title=chunk, char_start=0, char_end=1, text=chunk, score=score,
               sources=sources)


def test_a_chain_goes_after_its_seed_and_the_seeds_bridge_links_not_before_the_first_results() -> None:
    ranking = [_ranked("a", 0.9), _ranked("a-link", 0.9, bridge_of="a"), _ranked("b", 0.5), _ranked("c", 0.4)]
    about = {"a": [_ranked("a-hop", 3.5)], "c": [_ranked("b", 3.2), _ranked("c-hop", 3.1)]}
    assert [h.chunk_id for h in chained(ranking, about, after=0, per_seed=1, k=10)] == [
        "a", "a-link", "a-hop", "b", "c"]  # c's first chain, b, is placed already
    assert [h.chunk_id for h in chained(ranking, about, after=0, per_seed=2, k=10)] == [
        "a", "a-link", "a-hop", "b", "c", "c-hop"]
    # Not before the first three: a's chain waits until then, with the score of the hit before it.
    placed = chained(ranking, about, after=3, per_seed=1, k=10)
    assert [h.chunk_id for h in placed] == ["a", "a-link", "b", "a-hop", "c"]
    assert placed[3].score == 0.5
    assert [h.chunk_id for h in chained(ranking, about, after=0, per_seed=1, k=2)] == ["a", "a-link"]
    assert chained(ranking, {}, after=2, per_seed=1, k=10) == ranking
