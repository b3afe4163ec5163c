// ppr, engine "memory": the graph ppr_project.cypher projects (same nodes, edges and weights), read once into the
// client, which runs the PageRank there (kg.retrieval.methods.ppr.MemoryGraph). One entry per chunk and per
// entity, each undirected edge on one side only, as `targets` with their `weights`:
//   a chunk: the entities it mentions ($mention_weight each);
//   an entity: the objects of the facts it is the subject of ($fact_weight per fact);
//   and one more entry per chunk naming another document's title: that document's chunks, $reference_weight
//   shared among them.
// Every chunk and entity has an entry even without an edge, so any seed is in the graph. One row of parallel
// lists (`ids`, `chunks`: whether each is a chunk, `targets`, `weights`): a row per entry costs the client
// more than the query (at 10,000 passages about 1 s of 2.5).
CALL () {
  MATCH (c:Chunk)
  WITH c, COLLECT { MATCH (c)-[:MENTIONS]->(e:Entity) RETURN e.id } AS targets
  RETURN c.id AS id, true AS chunk, targets, [t IN targets | $mention_weight] AS weights
  UNION ALL
  MATCH (s:Entity)
  WITH s, COLLECT { MATCH (s)<-[:SUBJECT]-(:Fact)-[:OBJECT]->(o:Entity) WHERE s <> o RETURN o.id } AS targets
  RETURN s.id AS id, false AS chunk, targets, [t IN targets | $fact_weight] AS weights
  UNION ALL
  MATCH (:Document)-[r:REFERENCES]->(o:Document) WHERE r.mention_chunks IS NOT NULL
  WITH r, COLLECT { MATCH (t:Chunk {document_id: o.id}) RETURN t.id } AS targets
  UNWIND r.mention_chunks AS mention
  MATCH (c:Chunk {id: mention})
  RETURN c.id AS id, true AS chunk, targets, [t IN targets | $reference_weight / size(targets)] AS weights
}
RETURN collect(id) AS ids, collect(chunk) AS chunks, collect(targets) AS targets, collect(weights) AS weights
