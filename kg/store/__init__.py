"""The graph store seam: the :class:`~kg.store.base.GraphStore` protocol and typed queries
(:mod:`kg.store.base`, :mod:`kg.store.queries`), its Neo4j implementation
(:class:`~kg.store.neo4j_store.Neo4jGraphStore`, over the official driver), the schema (constraints, vector
and full-text indexes) and Lucene query syntax."""
