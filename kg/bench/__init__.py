"""Benchmarks behind ``strata bench ...``: each runs in a throwaway Neo4j and returns a JSON-able report."""
