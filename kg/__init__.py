"""Strata: a graph-database-centric knowledge platform on Neo4j."""
