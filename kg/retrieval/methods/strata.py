"""``strata``: the recommended default retriever.

It fuses, by weighted reciprocal rank, what each signal is good at:

1. the hybrid ranking (``hybrid.cypher``): chunk vectors, atoms, and Lucene BM25 over chunks and atoms,
   fused by calibrated (z-score) fusion, so a weak vector signal cannot drag a good lexical ranking down;
2. passages the question names by title (comparison questions name both of their passages);
3. ``named_by``: for each top hybrid seed, the passage nearest the question among those that name it
   (incoming REFERENCES: the second hop of a question whose answer names its first);
4. optional, off by default (weight 0, not run): ``bridge`` links as a list of their own, entity links,
   chunks mentioning entities the question names (they cost recall on both the titled and the untitled
   HotpotQA sample with offline entities), and the ``ppr`` method's personalised PageRank ranking
   (docs/retrieval.md has the measurements).

5. a second round (:mod:`kg.retrieval.rounds`, ``rounds=2``): the names the best fused passages hold and the
   question does not are probed in one more round trip, and each seed's best passage about one of them is
   placed after it (not before the second result): the hop a composed question never names.

Each of 2-4 is a ranked list in the fusion, so such a link only outranks a direct match when several signals
agree. Bridge links are not fused by rank but placed: each of the top ``seeds`` hybrid seeds, and each of the
first ``seeds`` other passages the question names, is followed, right after it, by its ``follow`` nearest
bridge links, the passages it names (a bridge question's second hop goes with its first; by reciprocal rank
a link no other signal found ranked below the hybrid list's 20th result, whatever its seed). Title links and
references need named passages (titles, or the names untitled passages open with) and find nothing in a corpus
without them, which leaves the hybrid ranking.
The question's title links, the seeds' bridge candidates and the passages naming them come back with the
hybrid ranking in one round trip (each chunk stores the name terms of its text at load time, so the server
can look its titles up itself): by default a query is one round trip, one more for the second round (none
when round one's best passages name nothing new), and one more when the question names passages that are
not hybrid seeds (their bridge links; entity links and ppr, when weighted, run on other sessions meanwhile).
"""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor

from kg.embeddings import Embedder
from kg.retrieval.base import Hit, HitSource, RetrievalFilter, Retriever
from kg.retrieval.common import filter_params, graph_has, hit_from_row, query_vector
from kg.retrieval.common_terms import CommonTermRule, shared_common_terms
from kg.retrieval.fusion import Fusion, fuse_hits
from kg.retrieval.links import named_links, title_links
from kg.retrieval.methods.hybrid import LinkedHit, default_weights, hybrid_hits_with_links
from kg.retrieval.methods.ppr import PPRRetriever
from kg.retrieval.rounds import ABOUT, chained, next_round
from kg.store.base import GraphStore
from kg.store.lucene import lucene_query
from kg.store.queries import ENTITY_LINKS

__all__ = ["LINK_WEIGHTS", "StrataRetriever"]

# Set on the HotpotQA sample (docs/retrieval.md): entity links and ppr cost recall there, so they do not run;
# bridge links are placed after their seeds (follow), not fused as a list.
LINK_WEIGHTS: Mapping[str, float] = {"hybrid": 1.0, "question_title": 1.0, "bridge": 0.0, "named_by": 0.25,
                                     "entity": 0.0, "ppr": 0.0}


class StrataRetriever(Retriever):
    """Hybrid retrieval plus title and bridge links, optionally entity links and ppr (the module docstring).

    Example::

        hits = StrataRetriever(store, embedder).retrieve("Who directed the film that ...?", k=10)
        print(hits[0].explain())   # e.g. "hybrid 0.016; bridge 0.008 via 'The Film'"
    """

    name = "strata"

    def __init__(self, store: GraphStore, embedder: Embedder, *, seeds: int = 3, follow: int = 2,
                 candidates: int = 15, weights: Mapping[str, float] = LINK_WEIGHTS, rrf_k: float = 60.0,
                 fusion: Fusion = "zscore", path_weights: Mapping[str, float] | None = None,
                 common_terms: CommonTermRule | None = CommonTermRule(), rounds: int = 2, round_seeds: int = 2,
                 bridges: int = 2, round_follow: int = 1, round_after: int = 2) -> None:
        self.store, self.embedder = store, embedder
        self.rounds, self.round_seeds, self.bridges = rounds, round_seeds, bridges
        self.round_follow, self.round_after = round_follow, round_after
        self.common_terms = shared_common_terms(store, common_terms)
        self.seeds, self.follow, self.candidates, self.rrf_k, self.fusion = seeds, follow, candidates, rrf_k, fusion
        self.weights = {**LINK_WEIGHTS, **weights}
        self.path_weights = dict(default_weights(embedder) if path_weights is None else path_weights)
        self._entities = False
        self._ppr = PPRRetriever(store, embedder) if self.weights["ppr"] > 0 else None
        # Shared by this retriever's queries: starting threads per query would cost more than it saves.
        self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="strata-links")

    def _has_entities(self) -> bool:
        """Whether entity links can find anything; asked until the answer is yes, so entities distilled after
        this retriever was made are used (a no, cached, would hold for the retriever's life)."""
        if not self._entities:
            self._entities = graph_has(self.store, "Entity")
        return self._entities

    def retrieve(self, question: str, *, k: int = 5, where: RetrievalFilter | None = None) -> list[Hit]:
        vector = query_vector(self.embedder, question)
        depth = max(k, self.candidates)
        side: dict[str, Future[list[Hit]]] = {}
        if self.weights["entity"] > 0 and self._has_entities():
            side["entity"] = self._pool.submit(self._entity_links, question, vector, where)
        if self._ppr is not None:
            side["ppr"] = self._pool.submit(self._ppr.retrieve, question, k=depth, where=where)
        bridged = self.follow > 0 or self.weights["bridge"] > 0
        named_by = 1 if self.weights["named_by"] > 0 else 0
        seeds = self.seeds if bridged or named_by else 0
        titled = self.weights["question_title"] > 0
        ranking = hybrid_hits_with_links(self.store, vector, question, k=depth, seeds=seeds, question_links=titled,
                                         named_by=named_by, fusion=self.fusion, weights=self.path_weights,
                                         candidates=depth, where=where, common=self.common_terms.terms())
        lists: dict[str, list[Hit]] = {"hybrid": [h.hit for h in ranking.hits]}
        named = named_links(question, ranking.question_links) if titled else []
        if titled:
            lists["question_title"] = named
        seed_hits = [h.hit for h in ranking.hits[:seeds]] if bridged else []
        bridge = self._bridge(seed_hits, self._seed_links(ranking.hits[:seeds], vector, where)) if bridged else []
        if bridged and named:
            # The passages the question names are seeds as much as the hybrid ones: "the director of film X"
            # names X, whose passage names the director.
            taken = {h.chunk_id for h in seed_hits}
            named_seeds = [h for h in named if h.chunk_id not in taken][:self.seeds]
            seed_hits += named_seeds
            bridge += self._bridge(named_seeds, title_links(
                self.store, [h.text for h in named_seeds], vector,
                exclude_documents=[[h.document_id] for h in named_seeds], where=where))
        if self.weights["bridge"] > 0:
            lists["bridge"] = [h for links in bridge for h in links]
        if named_by:
            lists["named_by"] = [h for seed in ranking.hits[:seeds] for h in seed.named_by]
        for signal, future in side.items():
            lists[signal] = future.result()
        followers = {seed.chunk_id: links[:self.follow] for seed, links in zip(seed_hits, bridge, strict=True)}
        fused = fuse_hits(lists, k=max(k, self.round_seeds), rrf_k=self.rrf_k, weights=self.weights,
                          followers=followers)
        if self.rounds == 1:
            return fused[:k]
        about = self._later_rounds(question, fused[:self.round_seeds], vector, where)
        return chained(fused, about, after=self.round_after, per_seed=self.round_follow, k=k)

    def _later_rounds(self, question: str, seeds: list[Hit], vector: list[float],
                      where: RetrievalFilter | None) -> dict[str, list[Hit]]:
        """Rounds 2 to ``rounds`` (:mod:`kg.retrieval.rounds`), each seeded by the best hit of each of the last
        round's probes: by seed chunk, the hits about one of its bridges, best first."""
        about: dict[str, list[Hit]] = {}
        for number in range(2, self.rounds + 1):
            probes = next_round(self.store, question, seeds, vector, number=number, bridges=self.bridges,
                                common=self.common_terms.terms(), where=where)
            for hit in (h for hits in probes for h in hits if h.score >= ABOUT):
                about.setdefault(hit.sources[0].via_id or "", []).append(hit)
            seeds = [hits[0] for hits in probes if hits][:self.round_seeds]
            if not seeds:
                break
        return {seed: sorted(hits, key=lambda h: -h.score) for seed, hits in about.items()}

    @staticmethod
    def _bridge(seeds: list[Hit], links: list[list[Hit]]) -> list[list[Hit]]:
        """Each seed's links, nearest the question first, each explained by the seed that names it."""
        return [[h.model_copy(update={"sources": [HitSource(path="bridge", score=h.score, via=seed.title,
                                                            via_id=seed.chunk_id)]}) for h in found]
                for seed, found in zip(seeds, links, strict=True)]

    def _seed_links(self, seeds: list[LinkedHit], vector: list[float],
                    where: RetrievalFilter | None) -> list[list[Hit]]:
        """Each seed's bridge links: from the candidates the hybrid query brought, else (a chunk loaded
        without stored name terms) looked up here."""
        missing = [s.hit for s in seeds if s.link_candidates is None]
        looked_up = iter(title_links(self.store, [h.text for h in missing], vector,
                                     exclude_documents=[[h.document_id] for h in missing], where=where))
        return [next(looked_up) if s.link_candidates is None else named_links(s.hit.text, s.link_candidates)
                for s in seeds]

    def _entity_links(self, question: str, vector: list[float], where: RetrievalFilter | None) -> list[Hit]:
        query = lucene_query(question)
        if not query:
            return []
        rows = self.store.read(ENTITY_LINKS, query=query, question=question, vector=vector, candidates=20,
                               **filter_params(where))
        return [hit_from_row(r) for r in rows]
