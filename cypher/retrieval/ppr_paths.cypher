// ppr: the ranked chunks $ids, each with how it is reached from the seeds, the shortest way first (none for a
// chunk that is itself a seed, $chunk_seeds): a mention of a seed entity; a seed passage naming its document's
// title, or its own chunk naming the seed passage's document; a mention of an entity that a fact joins to a
// seed entity. `path` names the nodes walked from the seed to the chunk; null for a chunk reached only by
// longer walks. A fact join is looked for from whichever of its two entities has fewer facts (a common entity
// has thousands).
UNWIND $ids AS id
MATCH (c:Chunk {id: id})
OPTIONAL MATCH (d:Document {id: c.document_id})
CALL (c) {
  UNWIND CASE WHEN c.id IN $chunk_seeds THEN [] ELSE [c] END AS x
  CALL (x) {
    MATCH (x)-[:MENTIONS]->(e:Entity) WHERE e.id IN $entity_seeds
    RETURN e.id AS seed_id, ['mentioned here'] AS path, 1 AS length
    UNION ALL
    MATCH (:Document)-[r:REFERENCES]->(:Document {id: x.document_id})
    UNWIND [y IN r.mention_chunks WHERE y IN $chunk_seeds] AS seed
    RETURN seed AS seed_id, ['names this passage\'s title'] AS path, 1 AS length
    UNION ALL
    MATCH (:Document {id: x.document_id})-[r:REFERENCES]->(o:Document) WHERE x.id IN r.mention_chunks
    MATCH (s:Chunk {document_id: o.id}) WHERE s.id IN $chunk_seeds
    RETURN s.id AS seed_id, ['its title is named here'] AS path, 1 AS length
    UNION ALL
    MATCH (x)-[:MENTIONS]->(e:Entity)
    UNWIND $entity_seeds AS seed
    MATCH (s:Entity {id: seed}) WHERE s <> e
    CALL (e, s) {
      WITH e, s WHERE COUNT { (e)<-[:SUBJECT|OBJECT]-() } <= COUNT { (s)<-[:SUBJECT|OBJECT]-() }
      MATCH (e)<-[:SUBJECT|OBJECT]-(f:Fact) WHERE EXISTS { (f)-[:SUBJECT|OBJECT]->(s) }
      RETURN f
      UNION ALL
      WITH e, s WHERE COUNT { (e)<-[:SUBJECT|OBJECT]-() } > COUNT { (s)<-[:SUBJECT|OBJECT]-() }
      MATCH (s)<-[:SUBJECT|OBJECT]-(f:Fact) WHERE EXISTS { (f)-[:SUBJECT|OBJECT]->(e) }
      RETURN f
    }
    RETURN s.id AS seed_id,
           ['fact ' + coalesce(f.text, f.head + ' ' + f.relation + ' ' + f.tail), e.name,
            'mentioned here'] AS path, 2 AS length
  }
  WITH seed_id, path, length ORDER BY length, seed_id
  RETURN collect({seed_id: seed_id, path: path})[0] AS best
}
RETURN c.id AS chunk_id, c.text AS text, c.document_id AS document_id, c.title AS title, d.source AS source,
       c.page AS page, c.char_start AS char_start, c.char_end AS char_end,
       coalesce(c.sentences, []) AS sentences, best.seed_id AS seed_id, best.path AS path
