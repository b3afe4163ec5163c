// ppr: the in-memory GDS graph $graph (a Cypher projection) over which the personalised PageRank runs, all
// relationships undirected with a `weight`:
//   (:Chunk)-[:MENTIONS]-(:Entity)                    $mention_weight  (HippoRAG 2's passage-phrase edges)
//   (:Entity)-[fact]-(:Entity), subject to object     $fact_weight per fact (HippoRAG 2's relation edges;
//                                                      the reified Fact collapses to the edge it states)
//   (:Chunk)-[reference]-(:Chunk), a chunk naming another document's title to that document's chunks
//                                                      $reference_weight, shared among the target's chunks
// Every chunk and entity is a node even without an edge, so any seed is in the graph.
CALL () {
  MATCH (c:Chunk)
  RETURN c AS source, null AS target, null AS weight
  UNION ALL
  MATCH (e:Entity)
  RETURN e AS source, null AS target, null AS weight
  UNION ALL
  MATCH (c:Chunk)-[:MENTIONS]->(e:Entity)
  RETURN c AS source, e AS target, $mention_weight AS weight
  UNION ALL
  MATCH (s:Entity)<-[:SUBJECT]-(:Fact)-[:OBJECT]->(o:Entity) WHERE s <> o
  RETURN s AS source, o AS target, $fact_weight AS weight
  UNION ALL
  MATCH (:Document)-[r:REFERENCES]->(o:Document) WHERE r.mention_chunks IS NOT NULL
  WITH r, o, COUNT { (t:Chunk {document_id: o.id}) } AS n
  UNWIND r.mention_chunks AS mention
  MATCH (c:Chunk {id: mention})
  MATCH (t:Chunk {document_id: o.id})
  RETURN c AS source, t AS target, $reference_weight / n AS weight
}
WITH gds.graph.project($graph, source, target,
       {sourceNodeLabels: labels(source), targetNodeLabels: labels(target),
        relationshipProperties: CASE WHEN weight IS NULL THEN null ELSE {weight: weight} END},
       {undirectedRelationshipTypes: ['*']}) AS g
RETURN g.graphName AS graph, g.nodeCount AS nodes, g.relationshipCount AS relationships,
       g.projectMillis AS millis
