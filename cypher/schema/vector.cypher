// Native vector indexes (Lucene HNSW, cosine). $dimensions comes from the configured embedder and is
// recorded on the StrataMeta node; a graph built with another dimension refuses to open. Entities, routes and
// topics hold vectors too (exact cosines read them) but no index: no query searches them by vector, and each
// indexed vector costs an HNSW insertion (docs/schema.md, "Indexes"); graphs created before 2026-11-27 lose the
// indexes they had.
DROP INDEX entity_embedding IF EXISTS;
DROP INDEX route_embedding IF EXISTS;
DROP INDEX topic_embedding IF EXISTS;
CREATE VECTOR INDEX chunk_embedding IF NOT EXISTS FOR (n:Chunk) ON n.embedding
  OPTIONS {indexConfig: {`vector.dimensions`: $dimensions, `vector.similarity_function`: 'cosine'}};
CREATE VECTOR INDEX atom_embedding IF NOT EXISTS FOR (n:Atom) ON n.embedding
  OPTIONS {indexConfig: {`vector.dimensions`: $dimensions, `vector.similarity_function`: 'cosine'}};
CREATE VECTOR INDEX fact_embedding IF NOT EXISTS FOR (n:Fact) ON n.embedding
  OPTIONS {indexConfig: {`vector.dimensions`: $dimensions, `vector.similarity_function`: 'cosine'}};
CREATE VECTOR INDEX factitem_embedding IF NOT EXISTS FOR (n:FactItem) ON n.embedding
  OPTIONS {indexConfig: {`vector.dimensions`: $dimensions, `vector.similarity_function`: 'cosine'}};
CREATE VECTOR INDEX document_embedding IF NOT EXISTS FOR (n:Document) ON n.embedding
  OPTIONS {indexConfig: {`vector.dimensions`: $dimensions, `vector.similarity_function`: 'cosine'}};
CREATE VECTOR INDEX section_embedding IF NOT EXISTS FOR (n:Section) ON n.embedding
  OPTIONS {indexConfig: {`vector.dimensions`: $dimensions, `vector.similarity_function`: 'cosine'}};
