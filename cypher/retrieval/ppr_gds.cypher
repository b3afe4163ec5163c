// ppr: whether the server has GDS's personalised PageRank (a server without the plugin, e.g. Aura Free or a
// cluster where it is not installed, has not).
SHOW PROCEDURES YIELD name WHERE name IN ['gds.pageRank.stream', 'gds.graph.drop']
RETURN count(name) = 2 AS present
