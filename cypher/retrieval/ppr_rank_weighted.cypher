// ppr: personalised PageRank on the GDS graph $graph in one run, each seed restarting with its own weight, by
// Strata's procedure strata.ppr.stream (kg/provisioning/plugin/WeightedPageRank.java: the push of the other
// engines, over the seeds' neighbourhood only). $chunks and $entities: the seeds, [{id, weight}]. The $depth
// chunks of most mass come back; those passing the filters are ranked, at most $k.
CALL () {
  UNWIND $chunks AS seed
  MATCH (n:Chunk {id: seed.id})
  RETURN n, seed.weight AS weight
  UNION ALL
  UNWIND $entities AS seed
  MATCH (n:Entity {id: seed.id})
  RETURN n, seed.weight AS weight
}
WITH collect(n) AS sources, collect(weight) AS weights
CALL strata.ppr.stream($graph, sources, weights, $damping, $iterations, $tolerance, 'Chunk', $depth)
YIELD node AS c, score
WITH c, score
WHERE ($document_ids IS NULL OR c.document_id IN $document_ids)
  AND NOT c.id IN $exclude_ids
  AND (($formats IS NULL AND $metadata IS NULL) OR EXISTS {
        MATCH (d:Document {id: c.document_id})
        WHERE ($formats IS NULL OR d.format IN $formats)
          AND ($metadata IS NULL OR all(m IN $metadata WHERE m IN d.metadata)) })
WITH c, score ORDER BY score DESC, c.id LIMIT $k
RETURN c.id AS chunk_id, score
