// ppr: drop the GDS graph $graph (nothing when another session dropped it already).
CALL gds.graph.drop($graph, false) YIELD graphName
RETURN graphName AS graph
