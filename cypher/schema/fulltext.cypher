// Lucene full-text indexes for lexical and hybrid retrieval. The two over the corpus's language (chunk_text,
// atom_text) use $analyzer (kg.store.schema: standard-no-stop-words unless the knowledge base is configured
// with another, such as english or cjk); the others hold names and keys, analysed the same in any language.
// The two the corpus writer fills in bulk are eventually consistent: their updates leave the write transaction
// (measured: commits about twice as fast), and a load ends with meta/await_fulltext so queries after it see
// everything written.
CREATE FULLTEXT INDEX chunk_text IF NOT EXISTS FOR (n:Chunk) ON EACH [n.text, n.title]
  OPTIONS {indexConfig: {`fulltext.analyzer`: $analyzer, `fulltext.eventually_consistent`: true}};
CREATE FULLTEXT INDEX document_title IF NOT EXISTS FOR (n:Document) ON EACH [n.title]
  OPTIONS {indexConfig: {`fulltext.eventually_consistent`: true}};
CREATE FULLTEXT INDEX atom_text IF NOT EXISTS FOR (n:Atom) ON EACH [n.text]
  OPTIONS {indexConfig: {`fulltext.analyzer`: $analyzer}};
CREATE FULLTEXT INDEX entity_names IF NOT EXISTS FOR (n:Entity) ON EACH [n.name, n.aliases];
// Entities by the block keys of their name, each one whole token (keyword analyzer): entity resolution's fuzzy
// step seeks a new name's keys here (kg.layers.distilled.text.name_blocks).
CREATE FULLTEXT INDEX entity_blocks IF NOT EXISTS FOR (n:Entity) ON EACH [n.block_keys]
  OPTIONS {indexConfig: {`fulltext.analyzer`: 'keyword'}};
// Topics and fact items by the MinHash band keys of their path text, and their document id (keyword analyzer,
// each one whole token): PG-RAG fusion seeks a pending node's keys among other documents' nodes here
// (kg.layers.distilled.text.fusion_keys) instead of a vector search, whose cost grew with the vector index's size
// and segments (docs/scaling.md).
CREATE FULLTEXT INDEX topic_fusion_keys IF NOT EXISTS FOR (n:Topic) ON EACH [n.fusion_keys, n.document_id]
  OPTIONS {indexConfig: {`fulltext.analyzer`: 'keyword'}};
CREATE FULLTEXT INDEX factitem_fusion_keys IF NOT EXISTS FOR (n:FactItem) ON EACH [n.fusion_keys, n.document_id]
  OPTIONS {indexConfig: {`fulltext.analyzer`: 'keyword'}};
// Tags by their normalised name or a normalised alias, each one whole token (keyword analyzer): the query
// expansion seeks a question's n-grams here instead of scanning every tag (26 ms at 10,000 tags, 786 ms at
// a million before; docs/scaling.md).
CREATE FULLTEXT INDEX tag_keys IF NOT EXISTS FOR (n:Tag) ON EACH [n.name_key, n.alias_keys]
  OPTIONS {indexConfig: {`fulltext.analyzer`: 'keyword'}};
