"""The three knowledge layers are defined once, and the writer's deletion classes cover every label."""

from pathlib import Path

import pytest

import cypher
from kg.app.client import LAYERS as CLIENT_LAYERS
from kg.layers import LAYERS
from kg.layers.resource.documents import FUSION_LABELS, OWNED_LABELS, SHARED_LABELS


def test_every_layer_label_is_allowed_and_the_client_shows_the_same_layers() -> None:
    labels = {label for labels in LAYERS.values() for label in labels}
    assert labels <= cypher.LABELS
    assert cypher.LABELS - labels == {"StrataMeta"}
    assert CLIENT_LAYERS is LAYERS


def test_deleting_a_document_knows_what_to_do_with_every_label_of_the_layers() -> None:
    # A label missing here would outlive the document it came from.
    deletable = set(OWNED_LABELS) | set(SHARED_LABELS) | set(FUSION_LABELS) | {"Document"}
    assert deletable == {label for labels in LAYERS.values() for label in labels}


def test_every_query_file_is_read_at_the_first_use_and_unknown_names_fail() -> None:
    """A running job keeps the queries it started with (the files are read together), and names outside the
    folder are refused."""
    root = Path(cypher.__file__).parent
    on_disk = {str(p.relative_to(root).with_suffix("")): p.read_text("utf-8") for p in root.rglob("*.cypher")}
    cypher.load("retrieval/chunk_vector")
    assert cypher._snapshot() == on_disk
    for name in ("retrieval/no_such_query", "../pyproject", "/etc/passwd", "retrieval"):
        with pytest.raises(cypher.UnknownQueryError):
            cypher.load(name)
