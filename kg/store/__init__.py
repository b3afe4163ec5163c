"""The graph store seam: the :class:`~kg.store.neo4j_store.GraphStore` over the official Neo4j driver, the
schema (constraints, vector and full-text indexes) and Lucene query syntax."""
