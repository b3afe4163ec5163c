// Lucene full-text indexes for lexical and hybrid retrieval.
CREATE FULLTEXT INDEX chunk_text IF NOT EXISTS FOR (n:Chunk) ON EACH [n.text, n.title];
CREATE FULLTEXT INDEX atom_text IF NOT EXISTS FOR (n:Atom) ON EACH [n.text];
CREATE FULLTEXT INDEX entity_names IF NOT EXISTS FOR (n:Entity) ON EACH [n.name, n.aliases];
CREATE FULLTEXT INDEX document_title IF NOT EXISTS FOR (n:Document) ON EACH [n.title];
