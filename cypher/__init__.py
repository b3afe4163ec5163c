"""Cypher statements, one per ``.cypher`` file, loaded by name.

``load("retrieval/chunk_vector")`` returns the text of ``cypher/retrieval/chunk_vector.cypher``. Values are
always ``$parameters``; labels and relationship types that must vary come only from :data:`LABELS` and
:data:`RELATIONSHIPS` through :func:`render`.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable

__all__ = ["LABELS", "LAYERS", "RELATIONSHIPS", "UnknownQueryError", "index_names", "load", "names", "render"]

# The three knowledge layers of the graph (PIKE-RAG, Figure 3) and their node labels: the one definition
# (re-exported as kg.layers.LAYERS), from which the label allow-list follows.
LAYERS: dict[str, tuple[str, ...]] = {
    "information-resource": ("Document",),
    "corpus": ("Section", "Chunk", "Table", "Figure"),
    "distilled": ("Atom", "Fact", "Entity", "Tag", "Row", "Topic", "Route", "FactItem", "SuperTopic", "SuperFact"),
}
# Every label a query may name: the layers' labels and the schema's own bookkeeping node.
LABELS: frozenset[str] = frozenset({label for labels in LAYERS.values() for label in labels} | {"StrataMeta"})
RELATIONSHIPS: frozenset[str] = frozenset(
    {
        "REFERENCES", "HAS_SECTION", "HAS_CHUNK", "NEXT", "HAS_TABLE", "HAS_FIGURE", "REPRESENTS",
        "ATOM_OF", "MENTIONS", "RELATED", "HAS_FACT", "FACT_OF", "SUBJECT", "OBJECT",
        "TAGGED", "HAS_ROW", "ROW_OF", "HAS_ROUTE", "HAS_ITEM", "ITEM_OF", "TOPIC_OF", "SIMILAR",
    }
)


class UnknownQueryError(KeyError):
    """No ``.cypher`` file has that name."""


def load(name: str) -> str:
    """Return the Cypher text of ``cypher/<name>.cypher``; fail fast on an unknown name."""
    try:
        return _snapshot()[name]
    except KeyError:
        raise UnknownQueryError(f"no Cypher file named {name!r}") from None


@cache
def _snapshot() -> dict[str, str]:
    """Every query's text, read together at the first use: a long job then runs the queries of the checkout it
    started from, even when a file is edited while it runs (a query first used later would otherwise be read
    then, new text with old Python)."""
    found: dict[str, str] = {}

    def walk(folder: Traversable, prefix: str) -> None:
        for entry in folder.iterdir():
            if entry.is_dir():
                walk(entry, f"{prefix}{entry.name}/")
            elif entry.name.endswith(".cypher"):
                found[prefix + entry.name.removesuffix(".cypher")] = entry.read_text(encoding="utf-8")

    walk(resources.files(__name__), "")
    return found


@cache
def index_names() -> frozenset[str]:
    """Names of the indexes and constraints Strata's schema files create (the index allow-list)."""
    found: set[str] = set()
    for name in names("schema"):
        found.update(re.findall(r"CREATE (?:\w+ )?(?:INDEX|CONSTRAINT) (\w+) IF NOT EXISTS", load(name)))
    return frozenset(found)


def names(folder: str) -> list[str]:
    """Names of every query in one folder, e.g. ``names("schema")``, sorted."""
    root = resources.files(__name__).joinpath(folder)
    return sorted(
        f"{folder}/{entry.name.removesuffix('.cypher')}"
        for entry in root.iterdir()
        if entry.name.endswith(".cypher")
    )


def render(
    name: str, *, label: str | None = None, rel: str | None = None, index: str | None = None,
    fusion_label: str | None = None,
) -> str:
    """Load a template query and fill ``{label}`` / ``{rel}`` / ``{index}`` from the allow-lists only.

    ``{fusion_label}`` is a second label, for the templates that link a fusion node (``SuperTopic``) to the
    nodes it fuses (``{label}``: ``Topic``)."""
    text = load(name)
    if index is not None:
        if index not in index_names():
            raise ValueError(f"index {index!r} is not one of Strata's indexes")
        text = text.replace("{index}", index)
    for placeholder, value in (("{label}", label), ("{fusion_label}", fusion_label)):
        if value is not None:
            if value not in LABELS:
                raise ValueError(f"label {value!r} is not in the allow-list")
            text = text.replace(placeholder, value)
    if rel is not None:
        if rel not in RELATIONSHIPS:
            raise ValueError(f"relationship type {rel!r} is not in the allow-list")
        text = text.replace("{rel}", rel)
    return text
