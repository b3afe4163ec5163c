// ppr (HippoRAG 2, adapted): the seeds of the personalised PageRank, each with its raw score; the weights are
// set in kg.retrieval.methods.ppr. Five kinds:
//   fact     the subject and object entities of the $fact_candidates facts nearest the query (fact_embedding;
//            HippoRAG 2's query-to-triple matching, without its LLM filter), via the fact;
//   statement the entities that the $fact_candidates atoms nearest the query name (atom_embedding; a name the
//            atom's chunk used for the entity, found in the atom's text), via the atom: the same match against
//            propositions, for the co-occurrences offline extraction leaves out of fact_embedding;
//   name     entities whose name or an alias occurs verbatim in $question (entity_names full-text);
//   dense    the $passage_candidates chunks nearest the query (chunk_embedding);
//   lexical  the $passage_candidates best Lucene (BM25) chunks for $query (skipped when $query is '').
// Scores are raw cosines for the vector paths, BM25 for lexical, 1.0 for a named entity. `chunks` is the number
// of chunks that mention an entity (HippoRAG 2 divides an entity's weight by it), 1 for a chunk: only chunks
// mention entities, so it is the entity's MENTIONS degree, read from the store without walking the
// relationships (naming the other end's label made every count walk them: 92,847 for one hub entity at 100k).
// One row: the seeds, and in the same round trip the graph's `version`, whose hash names the GDS projection
// (kg.retrieval.methods.ppr); with $vector null and $query '' only the version.
CALL () {
  UNWIND CASE WHEN $vector IS NULL THEN [] ELSE [$vector] END AS v
  CALL db.index.vector.queryNodes('fact_embedding', $fact_candidates, v) YIELD node AS f
  MATCH (f)-[:SUBJECT|OBJECT]->(e:Entity)
  RETURN 'fact' AS kind, e.id AS id, e.name AS name, 2 * vector.similarity.cosine(f.embedding, v) - 1 AS score,
         coalesce(f.text, f.head + ' ' + f.relation + ' ' + f.tail) AS via, f.id AS via_id,
         COUNT { (e)<-[:MENTIONS]-() } AS chunks
  UNION ALL
  UNWIND CASE WHEN $vector IS NULL THEN [] ELSE [$vector] END AS v
  CALL db.index.vector.queryNodes('atom_embedding', $fact_candidates, v) YIELD node AS a
  MATCH (a)-[:ATOM_OF]->(:Chunk)-[m:MENTIONS]->(e:Entity)
  WHERE any(n IN coalesce(m.names, [e.name]) WHERE a.text CONTAINS n)
  RETURN 'statement' AS kind, e.id AS id, e.name AS name, 2 * vector.similarity.cosine(a.embedding, v) - 1 AS score,
         a.text AS via, a.id AS via_id, COUNT { (e)<-[:MENTIONS]-() } AS chunks
  UNION ALL
  UNWIND CASE WHEN $query = '' THEN [] ELSE [$query] END AS q
  CALL db.index.fulltext.queryNodes('entity_names', q, {limit: $entity_candidates}) YIELD node AS e
  WITH e, [n IN [e.name] + coalesce(e.aliases, []) WHERE n IS NOT NULL AND size(n) > 2 AND $question CONTAINS n] AS named
  WHERE size(named) > 0
  RETURN 'name' AS kind, e.id AS id, e.name AS name, 1.0 AS score, named[0] AS via, null AS via_id,
         COUNT { (e)<-[:MENTIONS]-() } AS chunks
  UNION ALL
  UNWIND CASE WHEN $vector IS NULL THEN [] ELSE [$vector] END AS v
  CALL db.index.vector.queryNodes('chunk_embedding', $passage_candidates, v) YIELD node AS c
  RETURN 'dense' AS kind, c.id AS id, c.title AS name, 2 * vector.similarity.cosine(c.embedding, v) - 1 AS score, null AS via, null AS via_id,
         1 AS chunks
  UNION ALL
  UNWIND CASE WHEN $query = '' THEN [] ELSE [$query] END AS q
  CALL db.index.fulltext.queryNodes('chunk_text', q, {limit: $passage_candidates}) YIELD node AS c, score
  RETURN 'lexical' AS kind, c.id AS id, c.title AS name, score, null AS via, null AS via_id, 1 AS chunks
}
WITH collect({kind: kind, id: id, name: name, score: score, via: via, via_id: via_id, chunks: chunks}) AS seeds
CALL () {
  MATCH (d:Document) WHERE d.loaded_at IS NOT NULL
  RETURN toString(d.loaded_at) AS loaded_at ORDER BY d.loaded_at DESC LIMIT 1
  UNION ALL
  RETURN null AS loaded_at
}
WITH seeds, collect(loaded_at) AS newest
RETURN seeds,
       // A load, a delete, a re-load and a distillation each change one of these (counts from the count store).
       [COUNT { (:Chunk) }, COUNT { (:Entity) }, COUNT { (:Fact) }, COUNT { ()-[:MENTIONS]->() },
        COUNT { ()-[:SUBJECT]->() }, COUNT { ()-[:OBJECT]->() }, COUNT { ()-[:REFERENCES]->() },
        COUNT { (:Document) }, coalesce(newest[0], '')] AS version
