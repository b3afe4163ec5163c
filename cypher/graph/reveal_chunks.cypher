// The last transaction of a large document's write: its hidden chunks become Chunks, all in this one
// transaction (it changes labels only, a few bytes a chunk), and the document is no longer loading.
MATCH (c:HiddenChunk {document_id: $id})
REMOVE c:HiddenChunk
SET c:Chunk
WITH count(c) AS revealed
MATCH (d:Document {id: $id})
REMOVE d.loading
RETURN revealed
