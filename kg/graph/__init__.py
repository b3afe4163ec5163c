"""Strata's graph access: the store, the schema, and the corpus-layer writer."""
