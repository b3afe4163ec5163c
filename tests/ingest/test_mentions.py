"""REFERENCES from explicit title mentions, found both ways at load time, in the real Neo4j."""

from __future__ import annotations

from pathlib import Path

import pytest
from neo4j import RoutingControl

from kg.embeddings import HashingEmbedder
from kg.layers.corpus.ingest import Ingestor, prepare_structural
from kg.layers.corpus.writer import DocumentWriter
from kg.layers.resource.references import MENTION_KEYS_VERSION, mention_keys, mention_name, name_variants
from kg.store.base import GraphStore
from kg.store.schema import ensure_schema
from loaders import load_path

EMBEDDER = HashingEmbedder(dimensions=64)
WRITE = RoutingControl.WRITE


@pytest.fixture
def ingestor(store: GraphStore) -> Ingestor:
    ensure_schema(store, EMBEDDER.name, EMBEDDER.dimensions)
    return Ingestor(store, EMBEDDER, chunk_tokens=80, chunk_overlap=10)


def references(store: GraphStore) -> set[tuple[str, str]]:
    rows = store.query("MATCH (a:Document)-[:REFERENCES]->(b:Document) RETURN a.title AS a, b.title AS b")
    return {(r["a"], r["b"]) for r in rows}


def write(path: Path, title: str, body: str) -> Path:
    path.write_text(f"# {title}\n\n{body}\n", "utf-8")
    return path


def load_texts(tmp_path: Path, ingestor: Ingestor, texts: dict[str, str]) -> None:
    """Load one text file per entry (file stem -> text): documents titled by their file names."""
    for stem, text in texts.items():
        (tmp_path / f"{stem}.txt").write_text(text + "\n", "utf-8")
    ingestor.load([tmp_path / f"{stem}.txt" for stem in texts])


def test_mentions_link_both_ways_whatever_the_load_order(tmp_path: Path, ingestor: Ingestor,
                                                         store: GraphStore) -> None:
    write(tmp_path / "plan.md", "Kestrel Ridge repowering plan",
          "The plan follows the findings of the Gearbox Failure Review 2024 and replaces twelve turbines.")
    ingestor.load([tmp_path / "plan.md"])
    assert references(store) == set()  # the review is not loaded yet

    # Loaded later, the review is found in the plan's text (incoming), and it names the plan (outgoing).
    write(tmp_path / "review.md", "Gearbox Failure Review 2024",
          "Thirteen gearboxes failed in 2024.\n\nThe Kestrel Ridge repowering plan answers this review.")
    report = ingestor.load([tmp_path / "review.md"])
    assert report.files[0].status == "loaded"
    assert references(store) == {
        ("Kestrel Ridge repowering plan", "Gearbox Failure Review 2024"),
        ("Gearbox Failure Review 2024", "Kestrel Ridge repowering plan"),
    }
    # Each mention keeps the chunks that name the title, and those chunks hold it.
    rows = store.query(
        "MATCH (a:Document {title: 'Gearbox Failure Review 2024'})-[r:REFERENCES]->(b:Document) "
        "UNWIND r.mention_chunks AS id MATCH (c:Chunk {id: id}) RETURN c.text AS text, c.document_id AS doc, "
        "a.id AS source")
    assert rows and all("Kestrel Ridge repowering plan" in r["text"] and r["doc"] == r["source"] for r in rows)
    assert store.query("MATCH (d:Document) WHERE d.mentions_pending RETURN count(d) AS n")[0]["n"] == 0


def test_only_verbatim_whole_title_mentions_count(tmp_path: Path, ingestor: Ingestor, store: GraphStore) -> None:
    write(tmp_path / "apollo.md", "Apollo 11", "The first crewed Moon landing.")
    write(tmp_path / "intro.md", "Introduction", "A generic heading used as a title.")
    write(tmp_path / "ok.md", "Mission notes", "Apollo 11 landed in July 1969.")
    write(tmp_path / "other-number.md", "Later missions", "Apollo 110 is not a mission; Apollo 13 returned.")
    write(tmp_path / "lower.md", "Reading list", "apollo 11 in lower case is not an explicit mention.")
    write(tmp_path / "generic.md", "Preface", "See the Introduction of every report.")
    ingestor.load([tmp_path])
    assert references(store) == {("Mission notes", "Apollo 11")}


def test_mentions_survive_replacement_and_resume_after_interruption(tmp_path: Path, ingestor: Ingestor,
                                                                   store: GraphStore) -> None:
    write(tmp_path / "a.md", "Osprey Flats site log", "Cables were replaced after the Heron Moor audit.")
    write(tmp_path / "b.md", "Heron Moor audit", "The audit found worn yaw brakes.")
    ingestor.load([tmp_path])
    assert references(store) == {("Osprey Flats site log", "Heron Moor audit")}

    # The mentioned document changes: its incoming mention is found again for the new version.
    write(tmp_path / "b.md", "Heron Moor audit", "The audit found worn yaw brakes and loose bolts.")
    assert ingestor.load([tmp_path / "b.md"]).files[0].status == "replaced"
    assert references(store) == {("Osprey Flats site log", "Heron Moor audit")}

    # A write that stopped before linking leaves its documents marked; the next load links them.
    write(tmp_path / "c.md", "Gannet Bank inspection", "Compared with the Heron Moor audit, fewer faults.")
    DocumentWriter(store).write([prepare_structural(doc, 80, 10) for doc in load_path(tmp_path / "c.md")])
    assert ("Gannet Bank inspection", "Heron Moor audit") not in references(store)
    assert ingestor.load([tmp_path]).summary()["unchanged"] == 3
    assert ("Gannet Bank inspection", "Heron Moor audit") in references(store)


def test_mention_keys_refuse_ordinary_titles() -> None:
    assert mention_keys("Introduction") is None
    assert mention_keys("the end") is None
    assert mention_keys("Io") is None
    keys = mention_keys("Storm Edda (2023)")
    assert keys is not None and keys.query == 'text:"Storm Edda \\(2023\\)"'
    assert keys.pattern.startswith("(?s).*(?<![\\p{L}\\p{N}_])Storm\\s+Edda") and keys.pattern.endswith("\\).*")
    chinese = mention_keys("北京大学")
    assert chinese is not None and chinese.pattern == "(?s).*北京大学.*"


def test_titles_are_keyed_by_their_least_used_term(tmp_path: Path, ingestor: Ingestor, store: GraphStore) -> None:
    """A title word every title shares (``Place``) keys few of them, so a chunk's lookup of it stays small; a
    chunk still finds every title it names, an old one included (outgoing), a Chinese one too."""
    for i in range(6):
        write(tmp_path / f"p{i}.md", f"Place {i}", f"Place {i} lies on a river.")
    ingestor.load([tmp_path])
    keys = [r["key"] for r in store.query("MATCH (d:Document) RETURN d.mention_key AS key")]
    assert keys.count("place") <= 1 and len(set(keys)) >= 5
    later = tmp_path / "later"
    later.mkdir()
    write(later / "tour.md", "Coastal tour", "The tour starts at Place 3, then Place 5, never Place 55.")
    write(later / "zh.md", "北京大学", "北京大学 是 一所 大学。")
    write(later / "visit.md", "Visit notes", "我们 参观了 北京大学 的 校园 and Place 1.")
    ingestor.load([later])
    assert {b for a, b in references(store) if a == "Coastal tour"} == {"Place 3", "Place 5"}
    assert {b for a, b in references(store) if a == "Visit notes"} == {"北京大学", "Place 1"}


def test_documents_written_before_titles_were_keyed_are_keyed_by_the_next_link(
        tmp_path: Path, ingestor: Ingestor, store: GraphStore) -> None:
    write(tmp_path / "audit.md", "Heron Moor audit", "The audit found worn yaw brakes.")
    ingestor.load([tmp_path / "audit.md"])
    store.query("MATCH (d:Document) REMOVE d.mention_key WITH count(*) AS n "
                "MATCH (m:StrataMeta {id: 'strata'}) REMOVE m.mention_keys", routing=WRITE)
    write(tmp_path / "log.md", "Osprey Flats site log", "Cables were replaced after the Heron Moor audit.")
    ingestor.load([tmp_path / "log.md"])
    assert references(store) == {("Osprey Flats site log", "Heron Moor audit")}
    assert store.query("MATCH (d:Document {title: 'Heron Moor audit'}) RETURN d.mention_key AS key")[0]["key"] in (
        "heron", "moor")
    assert store.query("MATCH (m:StrataMeta {id: 'strata'}) RETURN m.mention_keys AS v")[0]["v"] == MENTION_KEYS_VERSION


def test_a_disambiguated_title_is_keyed_by_its_name_not_its_qualifier() -> None:
    keys = mention_keys("The Boys (1991 film)")
    assert keys is not None and "boys" in keys.terms and not {"1991", "film"} & set(keys.terms)


def test_titles_keyed_by_their_qualifier_are_keyed_again_by_the_next_link(
        tmp_path: Path, ingestor: Ingestor, store: GraphStore) -> None:
    """A graph keyed by version 1 (every title term) had "The Boys (1991 film)" keyed by ``1991``, which no
    text that calls the film "The Boys" holds; the next load keys it by its name, once."""
    write(tmp_path / "film.md", "The Boys (1991 film)", "The Boys is a drama directed by Glenn Jordan.")
    write(tmp_path / "plain.md", "Glenn Jordan", "Glenn Jordan directed television films.")
    ingestor.load([tmp_path / "film.md", tmp_path / "plain.md"])
    store.query("MATCH (d:Document {title: 'The Boys (1991 film)'}) SET d.mention_key = '1991' WITH count(*) AS n "
                "MATCH (m:StrataMeta {id: 'strata'}) SET m.mention_keys = true", routing=WRITE)
    plain_key = store.query("MATCH (d:Document {title: 'Glenn Jordan'}) RETURN d.mention_key AS key")[0]["key"]
    write(tmp_path / "later.md", "Television in 1991", "Audiences met The Boys that spring.")
    ingestor.load([tmp_path / "later.md"])
    rows = store.query("MATCH (d:Document) RETURN d.title AS title, d.mention_key AS key")
    keys = {r["title"]: r["key"] for r in rows}
    assert keys["The Boys (1991 film)"] == "boys" and keys["Glenn Jordan"] == plain_key
    assert store.query("MATCH (m:StrataMeta {id: 'strata'}) RETURN m.mention_keys AS v")[0]["v"] == MENTION_KEYS_VERSION


@pytest.mark.parametrize(("title", "text", "name"), [
    ("Shirley Temple", "Shirley Temple Black (April 23, 1928) was an actress.", "Shirley Temple"),  # the title, used
    ("P3f1c0a9e", "Shirley Temple Black (April 23, 1928) was an actress.", "Shirley Temple Black"),
    ("P3f1c0a9e", "The Hythrun Chronicles is a fantasy series by Jennifer Fallon.", "Hythrun Chronicles"),
    ("P3f1c0a9e", "Kiss and Tell is a 1945 American comedy film.", "Kiss and Tell"),
    ("P3f1c0a9e", "John F. Kennedy was the 35th president.", "John F. Kennedy"),
    ("P3f1c0a9e", "Hamburg is a port city.", "P3f1c0a9e"),  # one capitalised word: any sentence opens so
    ("P3f1c0a9e", "In New York, most people walk.", "P3f1c0a9e"),  # a phrase, not a name
    ("P3f1c0a9e", '"Bank of America Tower" is a skyscraper.', "Bank of America Tower"),
    ("notes", "Meeting notes from Tuesday.", "notes"),
    ("pump_manual", "Installation Guide for the XR-200 pump.", "Installation Guide"),
    ("", "Kiss and Tell is a 1945 American comedy film.", "Kiss and Tell"),  # no title at all
    ("Green Day", "Billie Joe Armstrong formed the band in 1987.", "Green Day"),  # a title of words stays
])
def test_a_document_is_mentioned_by_its_title_or_else_by_the_name_it_opens_with(title: str, text: str,
                                                                                name: str) -> None:
    assert mention_name(title, text) == name


def test_documents_without_a_used_title_are_referenced_by_their_opening_name(tmp_path: Path, ingestor: Ingestor,
                                                                             store: GraphStore) -> None:
    # Passages titled by identifiers: the mentions follow the names their openings give them.
    load_texts(tmp_path, ingestor, {"a1": "Kiss and Tell is a 1945 film starring Shirley Temple Black as Corliss.",
                                    "b2": "Shirley Temple Black (1928 - 2014) was an American actress and diplomat.",
                                    "c3": "Two names appear here: Shirley Temple Black and Kiss and Tell."})
    names = {r["title"]: r["name"] for r in store.query(
        "MATCH (d:Document) RETURN d.title AS title, d.mention_name AS name")}
    assert names == {"a1": "Kiss and Tell", "b2": "Shirley Temple Black", "c3": "c3"}
    assert references(store) == {("a1", "b2"), ("c3", "a1"), ("c3", "b2")}


def test_documents_written_before_they_were_named_are_named_and_linked_by_the_next_load(
        tmp_path: Path, ingestor: Ingestor, store: GraphStore) -> None:
    (tmp_path / "a1.txt").write_text("Kiss and Tell is a 1945 film starring Shirley Temple Black as Corliss.\n")
    (tmp_path / "b2.txt").write_text("Shirley Temple Black (1928 - 2014) was an American actress and diplomat.\n")
    ingestor.load([tmp_path / "a1.txt", tmp_path / "b2.txt"])
    # As the version before names left them: no name, titles too ordinary to key, no REFERENCES between them.
    assert mention_keys("a1") is None and mention_keys("b2") is None
    store.query("MATCH (d:Document) REMOVE d.mention_name, d.mention_query, d.mention_pattern, d.mention_key "
                "WITH count(*) AS n MATCH ()-[r:REFERENCES]->() DELETE r WITH count(*) AS n "
                "MATCH (m:StrataMeta {id: 'strata'}) SET m.mention_keys = 2", routing=WRITE)
    assert references(store) == set()
    (tmp_path / "c3.txt").write_text("Two names appear here: Shirley Temple Black and Kiss and Tell.\n")
    ingestor.load([tmp_path / "c3.txt"])
    rows = store.query("MATCH (d:Document) RETURN d.title AS title, d.mention_name AS name, d.mention_key AS key")
    assert {r["title"]: r["name"] for r in rows} == {"a1": "Kiss and Tell", "b2": "Shirley Temple Black", "c3": "c3"}
    assert {r["title"]: r["key"] for r in rows}["b2"] in ("shirley", "temple", "black")
    assert references(store) == {("a1", "b2"), ("c3", "a1"), ("c3", "b2")}
    assert store.query("MATCH (m:StrataMeta {id: 'strata'}) RETURN m.mention_keys AS v")[0]["v"] == MENTION_KEYS_VERSION


@pytest.mark.parametrize(("name", "text", "variants"), [
    ("Michael Trent Reznor", "Michael Trent Reznor (born May 17, 1965) is an American musician.",
     ("Michael Reznor", "Trent Reznor")),
    ("Andrew Alan Drew Fuller", 'Andrew Alan "Drew" Fuller (born May 19, 1980) is an American actor.',
     ("Andrew Fuller", "Drew Fuller")),
    ("Sir John William Downer", "Sir John William Downer, KCMG, KC (6 July 1843 - 2 August 1915) was a premier.",
     ("John Downer", "John William Downer", "William Downer")),
    ("Dale Brown", "Dale Brown (born November 2, 1956) is an American writer.", ()),  # already short
    ("Silas Daniels III", "Silas Daniels III (born 1951) is a politician.", ("Silas Daniels",)),
    ("Bank of America Tower", "Bank of America Tower (2009) is a skyscraper.", ()),  # a joiner: not a person
    ("Carry On Cruising", "Carry On Cruising is the sixth Carry On film, released in 1962.", ()),  # no life dates
    ("Dunkin Brands Group", "Dunkin Brands Group, Inc. is a restaurant holding company (founded 2004).", ()),
    ("Dunkin Brands Group", "Dunkin Brands Group, Inc. (founded 2004) is a restaurant holding company.", ()),
    ("King Wallis Vidor", "King Wallis Vidor ( ; February 8, 1894 - November 1, 1982) was a director.",
     ("King Vidor", "Wallis Vidor")),
    ("Robert Throb Young", 'Robert "Throb" Young (1964 - 9 September 2014) was a Scottish musician.',
     ("Robert Young", "Throb Young")),
])
def test_a_biographys_full_name_is_also_mentioned_by_its_short_forms(name: str, text: str,
                                                                     variants: tuple[str, ...]) -> None:
    assert name_variants(name, text) == variants


def test_a_biography_is_referenced_by_the_short_form_of_its_name(tmp_path: Path, ingestor: Ingestor,
                                                                 store: GraphStore) -> None:
    load_texts(tmp_path, ingestor, {"a1": "The soundtrack was produced by Trent Reznor of Nine Inch Nails.",
                                    "b2": "Michael Trent Reznor (born May 17, 1965) is an American musician.",
                                    "c3": "Michael Reznor is not Trent. Reznor alone names nobody."})
    rows = store.query("MATCH (d:Document {title: 'b2'}) RETURN d.mention_name AS name, d.mention_names AS names, "
                       "d.mention_key AS key")
    assert rows[0]["name"] == "Michael Trent Reznor" and rows[0]["key"] == "reznor"
    assert rows[0]["names"] == ["Michael Trent Reznor", "Michael Reznor", "Trent Reznor"]
    assert references(store) == {("a1", "b2"), ("c3", "b2")}  # c3 says "Michael Reznor"


def test_documents_named_before_short_forms_are_named_again_by_the_next_load(
        tmp_path: Path, ingestor: Ingestor, store: GraphStore) -> None:
    load_texts(tmp_path, ingestor, {"a1": "The soundtrack was produced by Trent Reznor of Nine Inch Nails.",
                                    "b2": "Michael Trent Reznor (born May 17, 1965) is an American musician."})
    # As version 3 left a biography: its full name only, keyed by one of its terms, no reference by short form.
    old = mention_keys("Michael Trent Reznor")
    assert old is not None
    store.query("MATCH (d:Document {title: 'b2'}) SET d.mention_query = $query, d.mention_pattern = $pattern, "
                "d.mention_key = 'michael' REMOVE d.mention_names WITH count(*) AS n "
                "MATCH ()-[r:REFERENCES]->() DELETE r WITH count(*) AS n "
                "MATCH (m:StrataMeta {id: 'strata'}) SET m.mention_keys = 3",
                query=old.query, pattern=old.pattern, routing=WRITE)
    assert references(store) == set()
    load_texts(tmp_path, ingestor, {"c3": "An unrelated note about gearboxes."})
    rows = store.query("MATCH (d:Document {title: 'b2'}) RETURN d.mention_names AS names, d.mention_key AS key")
    assert rows[0]["names"] == ["Michael Trent Reznor", "Michael Reznor", "Trent Reznor"] and rows[0]["key"] == "reznor"
    assert references(store) == {("a1", "b2")}
    assert store.query("MATCH (m:StrataMeta {id: 'strata'}) RETURN m.mention_keys AS v")[0]["v"] == MENTION_KEYS_VERSION
