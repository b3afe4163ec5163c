// The full-text analyzers this server offers (Strata's configured one must be among them).
CALL db.index.fulltext.listAvailableAnalyzers() YIELD analyzer
RETURN analyzer AS name
