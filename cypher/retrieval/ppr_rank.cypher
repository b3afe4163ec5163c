// ppr: personalised PageRank on the GDS graph $graph. GDS 2.13 takes unweighted source nodes, and PageRank is
// linear in its restart vector, so each of $groups ({chunks, entities, weight}: seeds of about equal weight)
// runs once with its seeds as sources and the runs are summed, each scaled by its weight. A node stops passing
// mass on once what it receives is at most $tolerance in units of the weighted restart (local_pagerank's
// threshold); GDS starts every source with the same mass whatever its weight, so a group's GDS tolerance is
// $tolerance / its weight. $concurrency threads a run. The $depth best nodes are looked up; chunks passing the
// filters are ranked, at most $k.
UNWIND $groups AS g
CALL (g) {
  OPTIONAL MATCH (c:Chunk) WHERE c.id IN g.chunks
  WITH g, collect(c) AS chunks
  OPTIONAL MATCH (e:Entity) WHERE e.id IN g.entities
  WITH g, chunks, collect(e) AS entities
  WITH g, chunks + entities AS sources
  CALL gds.pageRank.stream($graph, {sourceNodes: sources, dampingFactor: $damping, maxIterations: $iterations,
                                    tolerance: $tolerance / g.weight, concurrency: $concurrency,
                                    relationshipWeightProperty: 'weight'})
  YIELD nodeId, score
  WITH g, nodeId, score WHERE score > 0.0
  RETURN nodeId, g.weight * score AS part
}
WITH nodeId, sum(part) AS score
ORDER BY score DESC LIMIT $depth
WITH gds.util.asNode(nodeId) AS c, score
WHERE c:Chunk
  AND ($document_ids IS NULL OR c.document_id IN $document_ids)
  AND NOT c.id IN $exclude_ids
  AND (($formats IS NULL AND $metadata IS NULL) OR EXISTS {
        MATCH (d:Document {id: c.document_id})
        WHERE ($formats IS NULL OR d.format IN $formats)
          AND ($metadata IS NULL OR all(m IN $metadata WHERE m IN d.metadata)) })
WITH c, score ORDER BY score DESC LIMIT $k
RETURN c.id AS chunk_id, score
