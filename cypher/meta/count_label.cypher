// Answered from Neo4j's count store, without a scan.
MATCH (n:{label}) RETURN count(n) AS count
