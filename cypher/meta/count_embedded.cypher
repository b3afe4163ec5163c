MATCH (n:{label}) WHERE n.embedding IS NOT NULL
RETURN count(n) AS embedded
