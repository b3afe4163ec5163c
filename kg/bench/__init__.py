"""Benchmarks behind ``strata bench ...``: each runs on a throwaway Neo4j and returns JSON-able results."""
