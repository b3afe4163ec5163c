"""The three knowledge layers of PIKE-RAG's heterogeneous graph, one package each:

``resource``  the information-resource layer: documents and the references between them
``corpus``    the corpus layer: sections, chunks, tables and figures, and the ingest that writes them
``distilled`` the distilled-knowledge layer: atomic questions, triples and entities, tabular rows, tags,
              and PG-RAG's fact items and pseudo-graph
"""

from cypher import LAYERS

__all__ = ["LAYERS"]
