"""Exploring Strata's graph in the Neo4j Browser: the evidence query of an answer and its Browser link.

The Browser opens a query in its editor from ``<browser>/?cmd=edit&arg=<url-encoded Cypher>``; the web
page and the demo print that link so a reader can see the cited chunks in their documents, sections,
atoms, facts and entities. ``strata.grass`` (next to this module) colours the three layers apart.

Example::

    cypher = evidence_cypher(["doc_1a2b:c3:9f00aa11bb"])
    print(browser_link("http://localhost:7474/browser/", cypher))
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from urllib.parse import quote

__all__ = ["DEFAULT_BROWSER_URL", "browser_link", "evidence_cypher", "grass_path"]

DEFAULT_BROWSER_URL = "http://localhost:7474/browser/"


def evidence_cypher(chunk_ids: Sequence[str]) -> str:
    """The evidence query with the chunk ids written in, since a Browser link cannot carry parameters.

    The ids are written as JSON strings, which are valid Cypher string literals (quotes and backslashes
    escaped), so no id can change the query's meaning.
    """
    template = resources.files(__name__).joinpath("evidence.cypher").read_text("utf-8")
    body = "\n".join(line for line in template.splitlines() if not line.startswith("//"))
    literal = "[" + ", ".join(json.dumps(i) for i in dict.fromkeys(chunk_ids)) + "]"
    return body.replace("$chunk_ids", literal).strip()


def browser_link(browser_url: str, cypher: str) -> str:
    """A Neo4j Browser URL that opens ``cypher`` in the editor, ready to run."""
    return f"{browser_url.rstrip('/')}/?cmd=edit&arg={quote(cypher, safe='')}"


def grass_path() -> Path:
    """Where the Browser style file is: drag it onto the Browser, or ``:style`` and paste it."""
    return Path(str(resources.files(__name__).joinpath("strata.grass")))
