"""Incremental entity resolution: each new mention joins an existing entity or a new one, in sub-quadratic
time.

A batch of mentions is resolved against the graph with three indexed lookups, never a pass over all
pairs: the exact ``key`` (normalised name + canonical type, a range index), the ``entity_names``
full-text index over names and alias lists (then exact normalised comparison), and the name's block keys
(:func:`~kg.layers.distilled.text.name_blocks`: the same words, or one word more or fewer, in the
keyword-analysed ``entity_blocks`` index), whose entities join when the exact cosine of their vectors is
above the threshold and their names pass a character n-gram guard. Mentions still unresolved are clustered
among themselves inside the batch by the same rule (block keys, cosine, guard), so how mentions are split
into batches does not change which of them merge.

Why block keys and not a vector search: an HNSW search over ``entity_embedding`` grew with the index's
segments (0.49 ms per mention at 10,000 entities, 6.3 ms at 300,000), and on real text the merges it alone
found were mostly wrong ("Albanian" into "Albania", "Kenneth Williams" into "Williams"): docs/scaling.md.

Types: two mentions merge only if their types are compatible, equal after canonicalisation or one of them
generic ("Entity"), and an entity never gathers two different specific types, even through a generic
mention: "Apple" the Organization and "Apple" the Fruit stay apart, and a generic "Apple" joins one of them
only when its name has a single specific type in the batch and among the existing entities of that name
(else it stays a generic entity of its own). A specific mention never joins an existing generic entity:
that entity would keep its generic type and let the next specific type in too.

The cost per new entity is a constant number of index seeks, whatever the number of entities.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from kg.embeddings import Embedder
from kg.layers.distilled.models import DistillConfig
from kg.layers.distilled.stored_keys import StoredKeys
from kg.layers.distilled.text import name_blocks, name_key, name_similarity
from kg.shared.disjoint_sets import DisjointSets
from kg.store.base import GraphStore
from kg.store.lucene import whole_terms_queries
from kg.store.queries import (
    ENTITIES_BY_BLOCKS,
    ENTITIES_BY_KEY,
    ENTITIES_BY_NAME,
    SET_ENTITY_KEYS,
    TEXTS_PAGE_ENTITY,
)

__all__ = [
    "ENTITY_BLOCKS",
    "EntityResolver",
    "Resolution",
    "ResolvedEntity",
    "canonical_type",
    "entity_key",
    "entity_row",
    "types_compatible",
]

GENERIC_TYPE = "entity"
_TYPE_SYNONYMS = {
    "": GENERIC_TYPE, "thing": GENERIC_TYPE, "other": GENERIC_TYPE, "misc": GENERIC_TYPE,
    "unknown": GENERIC_TYPE, "propn": GENERIC_TYPE, "实体": GENERIC_TYPE,
    "org": "organization", "organisation": "organization", "company": "organization",
    "institution": "organization", "组织": "organization", "机构": "organization", "公司": "organization",
    "per": "person", "people": "person", "human": "person", "人物": "person", "人": "person",
    "loc": "location", "gpe": "location", "place": "location", "地点": "location", "地名": "location",
    "time": "date", "year": "date", "日期": "date", "时间": "date",
    "quantity": "number", "cardinal": "number", "数字": "number",
}
# The block keys of entities' names (kg.layers.distilled.text.name_blocks), given once to entities written before
# they existed. A new version re-keys every entity.
ENTITY_BLOCKS = StoredKeys("entity_blocks", TEXTS_PAGE_ENTITY, SET_ENTITY_KEYS, version=1,
                           keys=lambda name: name_blocks(name).stored)
_LUCENE_SPECIAL = re.compile(r'([+\-!(){}\[\]^"~*?:\\/&|])')


def canonical_type(value: str) -> str:
    """Lower-cased, singular-ish type with common synonyms folded ("ORG", "Company" -> "organization")."""
    key = " ".join(value.strip().casefold().replace("_", " ").split())
    return _TYPE_SYNONYMS.get(key, key)


def types_compatible(a: str, b: str) -> bool:
    ca, cb = canonical_type(a), canonical_type(b)
    return ca == cb or GENERIC_TYPE in (ca, cb)


def entity_key(name: str, type_: str) -> str:
    return f"{name_key(name)}|{canonical_type(type_)}"


def _entity_id(key: str) -> str:
    return "ent_" + hashlib.sha1(key.encode("utf-8")).hexdigest()[:20]


def entity_row(id_: str, name: str, type_: str, *, source: str, embedding: Sequence[float] | None,
               aliases: Iterable[str] = ()) -> dict[str, object]:
    """The row ``distill/merge_entities`` writes for a new entity, its key and block keys derived from its name."""
    return {"id": id_, "key": entity_key(name, type_), "name": name, "type": type_, "aliases": sorted(aliases),
            "block_keys": list(name_blocks(name).stored), "source": source, "embedding": embedding}


@dataclass
class ResolvedEntity:
    """Where a mention went: an existing entity (``new`` False) or a new one, and names to add as
    aliases."""

    id: str
    key: str
    name: str
    type: str
    new: bool
    embedding: list[float] | None = None
    aliases: set[str] = field(default_factory=set)

    def row(self, source: str) -> dict[str, object]:
        """The row that writes this entity, when it is new (:func:`entity_row`)."""
        return entity_row(self.id, self.name, self.type, source=source, embedding=self.embedding,
                          aliases=self.aliases)


@dataclass
class Resolution:
    """Mention (surface name, type) -> entity id, plus the entity rows to write."""

    ids: dict[tuple[str, str], str] = field(default_factory=dict)
    entities: dict[str, ResolvedEntity] = field(default_factory=dict)

    @property
    def new(self) -> list[ResolvedEntity]:
        return [e for e in self.entities.values() if e.new]

    def alias_rows(self) -> list[dict[str, object]]:
        return [{"id": e.id, "aliases": sorted(e.aliases)} for e in self.entities.values()
                if not e.new and e.aliases]


@dataclass
class _Candidate:
    id: str
    name: str
    type: str
    aliases: list[str]
    score: float = 1.0


class EntityResolver:
    """Resolves batches of mentions against the graph (see the module docstring)."""

    def __init__(self, store: GraphStore, embedder: Embedder, config: DistillConfig | None = None) -> None:
        self.store = store
        self.embedder = embedder
        self.config = config or DistillConfig()
        self._frequency: Counter[tuple[str, str]] = Counter()

    def resolve(self, mentions: Sequence[tuple[str, str]]) -> Resolution:
        """Resolve ``(name, type)`` mentions; equal mentions resolve once."""
        cfg = self.config
        unique: dict[tuple[str, str], str] = {}
        self._frequency = Counter()
        for name, type_ in mentions:
            name = " ".join(name.split())
            if name_key(name):
                unique.setdefault((name, type_), entity_key(name, type_))
                self._frequency[(name, type_)] += 1
        out = Resolution()
        if not unique:
            return out
        pending = list(unique.items())
        found = self._by_key(sorted({k for _, k in pending}))
        # Only mentions the exact key missed need the (costlier) full-text name lookup.
        names = sorted({name_key(n) for (n, _), key in pending if key not in found})
        by_name = self._by_name(names) if names else {}
        # The specific types each name has in this batch and among existing entities of that name: a generic
        # mention of a name with several ("Apple": Fruit, Organization) is ambiguous and joins none of them.
        kinds: dict[str, set[str]] = {}
        for (name, type_), _key in pending:
            kinds.setdefault(name_key(name), set()).add(canonical_type(type_))
        for key, candidates in by_name.items():
            kinds.setdefault(key, set()).update(canonical_type(c.type) for c in candidates)
        ambiguous = {key for key, types in kinds.items() if len(types - {GENERIC_TYPE}) > 1}
        unresolved: list[tuple[tuple[str, str], str]] = []
        for (name, type_), key in pending:
            hit = found.get(key) or _pick(by_name.get(name_key(name), []), type_, name_key(name) in ambiguous)
            if hit is None:
                unresolved.append(((name, type_), key))
            else:
                self._assign(out, (name, type_), hit)
        if not unresolved:
            return out
        vectors = self.embedder.embed([n for (n, _), _ in unresolved])
        neighbours = self._by_blocks([n for (n, _), _ in unresolved], vectors)
        left: list[int] = []
        for i, ((name, type_), _key) in enumerate(unresolved):
            similar = [c for c in neighbours.get(i, [])
                       if name_similarity(name_key(c.name), name_key(name)) >= cfg.entity_name_similarity]
            hit = _pick(similar, type_, name_key(name) in ambiguous)
            if hit is not None:
                self._assign(out, (name, type_), hit)
            else:
                left.append(i)
        self._cluster_new(out, [unresolved[i] for i in left], vectors[left] if left else vectors[:0], ambiguous)
        return out

    # -- lookups ----------------------------------------------------------------------------------------

    def _by_key(self, keys: list[str]) -> dict[str, _Candidate]:
        rows = self.store.read(ENTITIES_BY_KEY, keys=keys)
        return {r["key"]: _Candidate(r["id"], r["name"], r["type"], r["aliases"] or []) for r in rows}

    def _by_name(self, names: list[str]) -> dict[str, list[_Candidate]]:
        """Entities whose name or an alias normalises to each name key (full-text, then exact check)."""
        rows = [{"key": n, "query": '"' + _LUCENE_SPECIAL.sub(r"\\\1", n) + '"'} for n in names]
        out: dict[str, list[_Candidate]] = {}
        for r in self.store.read(ENTITIES_BY_NAME, rows=rows, limit=self.config.entity_candidates):
            aliases = r["aliases"] or []
            if r["key"] == name_key(r["name"]) or r["key"] in {name_key(a) for a in aliases}:
                out.setdefault(r["key"], []).append(_Candidate(r["id"], r["name"], r["type"], aliases, r["score"]))
        return out

    def _by_blocks(self, names: list[str], vectors: npt.NDArray[np.float32]) -> dict[int, list[_Candidate]]:
        """Existing entities sharing a block key with each name, whose vectors are within the threshold."""
        # A name with no embeddable feature has a zero vector, which has no cosine to anything.
        rows = [{"i": i, "query": whole_terms_queries(name_blocks(name).asked)[0], "embedding": v.tolist()}
                for i, (name, v) in enumerate(zip(names, vectors, strict=True)) if np.any(v) and name_key(name)]
        out: dict[int, list[_Candidate]] = {}
        if not rows:
            return out
        for r in self.store.read(ENTITIES_BY_BLOCKS, rows=rows, limit=self.config.entity_candidates,
                                 threshold=self.config.entity_threshold):
            out.setdefault(r["i"], []).append(_Candidate(r["id"], r["name"], r["type"], r["aliases"] or [],
                                                         r["score"]))
        return out

    # -- assignment ---------------------------------------------------------------------------------------

    @staticmethod
    def _assign(out: Resolution, mention: tuple[str, str], hit: _Candidate) -> None:
        entity = out.entities.get(hit.id)
        if entity is None:
            entity = ResolvedEntity(hit.id, entity_key(hit.name, hit.type), hit.name, hit.type, new=False)
            out.entities[hit.id] = entity
        name = mention[0]
        if name != entity.name and name not in hit.aliases:
            entity.aliases.add(name)
        out.ids[mention] = hit.id

    def _cluster_new(self, out: Resolution, mentions: list[tuple[tuple[str, str], str]],
                     vectors: npt.NDArray[np.float32], ambiguous: set[str]) -> None:
        """Group the batch's new mentions: same name and type, a generic type joining its name's one
        specific type, or a shared block key with vectors above the threshold and similar names (the rule
        existing entities are met by). A group never holds two specific types, however it is reached."""
        cfg = self.config
        sets = DisjointSets[int]()
        # The specific type of each group (at its root); None while the group is all generic. An ambiguous
        # generic mention starts as the generic type itself, so it joins no specific group.
        kind: list[str | None] = []
        for (name, type_), _ in mentions:
            canonical = canonical_type(type_)
            free = canonical == GENERIC_TYPE and name_key(name) not in ambiguous
            kind.append(None if free else canonical)

        def union(i: int, j: int) -> None:
            a, b = sets.find(i), sets.find(j)
            if a != b and (kind[a] is None or kind[b] is None or kind[a] == kind[b]):
                sets.union(a, b)  # a stays the root
                kind[a] = kind[a] or kind[b]

        by_name: dict[str, list[int]] = {}
        for i, ((name, _), _) in enumerate(mentions):
            by_name.setdefault(name_key(name), []).append(i)
        for idx in by_name.values():
            for i in idx:
                for j in idx:
                    if i < j:
                        union(i, j)
        # Pairs sharing a block key (as the lookup of existing entities meets them) within the threshold.
        blocks = [name_blocks(name) for (name, _), _ in mentions]
        stored: dict[str, list[int]] = {}
        for i, block in enumerate(blocks):
            for key in block.stored:
                stored.setdefault(key, []).append(i)
        pairs: list[tuple[float, int, int]] = []
        for i, block in enumerate(blocks):
            met = {j for key in block.asked for j in stored.get(key, ()) if j > i}
            for j in sorted(met):
                similarity = float(vectors[i] @ vectors[j])
                if similarity >= cfg.entity_threshold:
                    pairs.append((similarity, i, j))
        # Most similar first, so a generic mention near two typed groups joins the nearer one.
        for _, i, j in sorted(pairs, key=lambda p: -p[0]):
            (ni, _), (nj, _) = mentions[i][0], mentions[j][0]
            if name_similarity(name_key(ni), name_key(nj)) >= cfg.entity_name_similarity:
                union(i, j)
        groups: dict[int, list[int]] = {}
        for i in range(len(mentions)):
            groups.setdefault(sets.find(i), []).append(i)
        for members in groups.values():
            # The canonical member: a specific type over the generic one, then the most frequent, then the
            # shortest form ("Barack Obama" over "Barack H. Obama").
            members.sort(key=lambda i: (canonical_type(mentions[i][0][1]) == GENERIC_TYPE,
                                        -self._frequency[mentions[i][0]], len(mentions[i][0][0]), mentions[i][0]))
            head = members[0]
            (name, type_), key = mentions[head]
            entity = ResolvedEntity(_entity_id(key), key, name, type_, new=True, embedding=vectors[head].tolist())
            out.entities[entity.id] = entity
            for i in members:
                out.ids[mentions[i][0]] = entity.id
                if mentions[i][0][0] != name:
                    entity.aliases.add(mentions[i][0][0])


def _pick(candidates: list[_Candidate], type_: str, ambiguous: bool) -> _Candidate | None:
    """The best existing entity a mention may join: the same canonical type first, then (for a generic
    mention whose name is not ambiguous) a typed one. A specific mention never joins a generic entity
    (see the module docstring)."""
    mine = canonical_type(type_)
    if mine != GENERIC_TYPE or ambiguous:
        fitting = [c for c in candidates if canonical_type(c.type) == mine]
    else:
        fitting = [c for c in candidates if types_compatible(c.type, type_)]
    if not fitting:
        return None
    return min(fitting, key=lambda c: (canonical_type(c.type) != mine, -c.score))
