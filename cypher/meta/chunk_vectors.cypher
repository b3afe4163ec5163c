// The embeddings of the chunks of documents $document_ids (the benchmarks' exact top-k runs over the very
// vectors the store holds).
UNWIND $document_ids AS document_id
MATCH (c:Chunk {document_id: document_id})
WHERE c.embedding IS NOT NULL
RETURN c.id AS chunk_id, c.embedding AS embedding
