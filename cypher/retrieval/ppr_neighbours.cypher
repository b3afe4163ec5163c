// ppr without GDS (the Cypher-only fallback): the neighbours of the chunks and entities $ids in the graph that
// ppr_project.cypher describes (same edges, same weights), at most $fanout per node and edge kind, with each
// node's full weighted degree (the normaliser of the mass it passes on), so kg.retrieval.methods.ppr can run
// the PageRank on the seeds' neighbourhood itself.
UNWIND $ids AS id
CALL (id) {
  MATCH (c:Chunk {id: id}) RETURN c AS n
  UNION
  MATCH (e:Entity {id: id}) RETURN e AS n
}
CALL (n) {
  OPTIONAL MATCH (n)-[:MENTIONS]-(v)
  WITH v LIMIT $fanout
  RETURN [x IN collect(v) | {id: x.id, weight: $mention_weight}] AS mentions
}
CALL (n) {
  OPTIONAL MATCH (n:Entity)<-[:SUBJECT|OBJECT]-(:Fact)-[:SUBJECT|OBJECT]->(v:Entity) WHERE v <> n
  WITH v LIMIT $fanout
  RETURN [x IN collect(v) | {id: x.id, weight: $fact_weight}] AS facts
}
CALL (n) {
  // a chunk naming another document's title: that document's chunks (the weight shared among them), and the
  // chunks that name this chunk's document (each with this document's share); none for an entity
  CALL (n) {
    MATCH (:Document {id: n.document_id})-[r:REFERENCES]->(o:Document) WHERE n.id IN r.mention_chunks
    MATCH (t:Chunk {document_id: o.id})
    WITH o, collect(t.id) AS targets
    UNWIND targets AS target
    RETURN target, $reference_weight / size(targets) AS weight
    UNION ALL
    MATCH (:Document)-[r:REFERENCES]->(:Document {id: n.document_id})
    UNWIND r.mention_chunks AS target
    RETURN target, $reference_weight / COUNT { (:Chunk {document_id: n.document_id}) } AS weight
  }
  WITH target, weight LIMIT $fanout
  RETURN collect({id: target, weight: weight}) AS refs
}
RETURN n.id AS id, mentions + facts + refs AS neighbours,
       $mention_weight * COUNT { (n)-[:MENTIONS]-() }
       + $fact_weight * COUNT { (n:Entity)<-[:SUBJECT|OBJECT]-(:Fact)-[:SUBJECT|OBJECT]->(v:Entity) WHERE v <> n }
       + reduce(t = 0.0, x IN refs | t + x.weight) AS degree
