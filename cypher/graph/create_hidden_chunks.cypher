// A batch of a large document's chunks ({id, section_id, props, embedding}), written hidden (HiddenChunk, not
// Chunk: no retrieval index or query sees them) until graph/reveal_chunks shows the whole document at once.
// MERGE, so a batch re-sent after a commit whose answer was lost writes nothing twice, and a chunk the old
// version had too (kept by a replacement, same text) takes its new place without a second vector.
UNWIND $rows AS row
MATCH (s:Section {id: row.section_id})
MERGE (c:HiddenChunk {id: row.id})
SET c += row.props
MERGE (s)-[:HAS_CHUNK]->(c)
WITH c, row WHERE row.embedding IS NOT NULL AND c.embedding IS NULL
CALL db.create.setNodeVectorProperty(c, 'embedding', row.embedding)
