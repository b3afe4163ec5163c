// ppr: whether the server has GDS's personalised PageRank (a server without the plugin, e.g. Aura Free or a
// cluster where it is not installed, has not), and whether it has Strata's weighted one on GDS projections
// (strata.ppr.stream: a server Strata provisions has it).
SHOW PROCEDURES YIELD name WHERE name IN ['gds.pageRank.stream', 'gds.graph.drop', 'strata.ppr.stream']
RETURN count(CASE WHEN name STARTS WITH 'gds.' THEN 1 END) = 2 AS present,
       count(CASE WHEN name = 'strata.ppr.stream' THEN 1 END) = 1 AS weighted
