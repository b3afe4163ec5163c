// ppr: the GDS graphs ppr projections left in the catalog (named $prefix + the graph's fingerprint).
CALL gds.graph.list() YIELD graphName
WITH graphName WHERE graphName STARTS WITH $prefix
RETURN graphName AS graph
