// ppr: how each ranked chunk $ids (not itself a seed) is reached from the seeds, the shortest way first: a
// mention of a seed entity; a seed passage naming its document's title, or its own chunk naming the seed
// passage's document; a mention of an entity that a fact joins to a seed entity. `path` names the nodes
// walked from the seed to the chunk; chunks reached only by longer walks have no row.
UNWIND $ids AS id
MATCH (c:Chunk {id: id})
CALL (c) {
  MATCH (c)-[:MENTIONS]->(e:Entity) WHERE e.id IN $entity_seeds
  RETURN e.id AS seed_id, ['mentioned here'] AS path, 1 AS length
  UNION ALL
  MATCH (:Document)-[r:REFERENCES]->(:Document {id: c.document_id})
  UNWIND [x IN r.mention_chunks WHERE x IN $chunk_seeds] AS seed
  RETURN seed AS seed_id, ['names this passage\'s title'] AS path, 1 AS length
  UNION ALL
  MATCH (:Document {id: c.document_id})-[r:REFERENCES]->(o:Document) WHERE c.id IN r.mention_chunks
  MATCH (s:Chunk {document_id: o.id}) WHERE s.id IN $chunk_seeds
  RETURN s.id AS seed_id, ['its title is named here'] AS path, 1 AS length
  UNION ALL
  MATCH (c)-[:MENTIONS]->(e:Entity)<-[:SUBJECT|OBJECT]-(f:Fact)-[:SUBJECT|OBJECT]->(s:Entity)
  WHERE s.id IN $entity_seeds AND s <> e
  RETURN s.id AS seed_id,
         ['fact ' + coalesce(f.text, f.head + ' ' + f.relation + ' ' + f.tail), e.name, 'mentioned here'] AS path,
         2 AS length
}
WITH c, seed_id, path, length ORDER BY length, seed_id
WITH c, collect({seed_id: seed_id, path: path})[0] AS best
RETURN c.id AS chunk_id, best.seed_id AS seed_id, best.path AS path
