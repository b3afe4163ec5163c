// REFERENCES from explicit title mentions, both ways, for the documents in $ids (see kg.layers.resource.references:
// a document's title, or the name its opening gives it, is its mention_name; older documents have their title; a
// biography's lead is also mentioned by its name's short forms, all in mention_names, and its query and pattern
// hold them all).
// Incoming: chunks of other documents that the title's phrase query finds (at most $incoming) and whose text
// holds the title verbatim. Outgoing: for each of the document's chunks, the titles keyed by one of its name
// terms (Document.mention_key, an index seek per term, at most $outgoing titles per term) that the chunk holds
// verbatim. Every word of a name is looked for with CONTAINS before the regular expression runs: a
// necessary condition, and on 10,000 generated passages it halved the outgoing half's time (9.3 s to 5.5 s).
// A REFERENCES keeps the mentioning chunks.
UNWIND $ids AS id
MATCH (d:Document {id: id})
CALL (d) {
  WITH d WHERE d.mention_query IS NOT NULL
  CALL db.index.fulltext.queryNodes('chunk_text', d.mention_query, {limit: $incoming}) YIELD node AS c
  WITH d, c WHERE c.document_id <> d.id
    AND any(name IN coalesce(d.mention_names, [coalesce(d.mention_name, d.title)])
            WHERE all(w IN split(name, ' ') WHERE c.text CONTAINS w)) AND c.text =~ d.mention_pattern
  MATCH (o:Document {id: c.document_id})
  WITH d, o, collect(c.id) AS chunk_ids
  MERGE (o)-[r:REFERENCES]->(d)
  SET r.mention_chunks = coalesce(r.mention_chunks, []) + [x IN chunk_ids WHERE NOT x IN coalesce(r.mention_chunks, [])]
  RETURN count(r) AS incoming
}
CALL (d) {
  MATCH (c:Chunk {document_id: d.id}) WHERE c.name_terms <> ''
  UNWIND coalesce(c.mention_terms, split(c.name_terms, ' ')) AS term
  CALL (term) {
    MATCH (o:Document {mention_key: term})
    RETURN o LIMIT $outgoing
  }
  WITH d, c, o WHERE o.id <> d.id AND o.mention_pattern IS NOT NULL
    AND any(name IN coalesce(o.mention_names, [coalesce(o.mention_name, o.title)])
            WHERE all(w IN split(name, ' ') WHERE c.text CONTAINS w)) AND c.text =~ o.mention_pattern
  WITH d, o, collect(c.id) AS chunk_ids
  MERGE (d)-[r:REFERENCES]->(o)
  SET r.mention_chunks = coalesce(r.mention_chunks, []) + [x IN chunk_ids WHERE NOT x IN coalesce(r.mention_chunks, [])]
  RETURN count(r) AS outgoing
}
REMOVE d.mentions_pending
RETURN sum(incoming) AS incoming, sum(outgoing) AS outgoing
