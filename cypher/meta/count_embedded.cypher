// Nodes of a label holding a vector of another dimension than $dimensions: vectors a switch of embedder would
// mix with the new ones (a vector of the new dimension was written by another process that already switched).
MATCH (n:{label}) WHERE n.embedding IS NOT NULL AND size(n.embedding) <> $dimensions
RETURN count(n) AS embedded
