// The chunks stored for the documents $ids, hidden ones too (a large version being written), read before a
// new version replaces them: those the new version has too (same text, so same id) are kept with what was
// distilled from them alone. None of a document whose deletion was begun: a deletion removes distilled
// nodes before the chunks, so what its chunks were distilled into may be gone.
UNWIND $ids AS id
MATCH (d:Document {id: id}) WHERE NOT coalesce(d.deleting, false)
CALL (id) {
  MATCH (c:Chunk {document_id: id})
  RETURN c.id AS chunk, false AS hidden
  UNION ALL
  MATCH (c:HiddenChunk {document_id: id})
  RETURN c.id AS chunk, true AS hidden
}
RETURN chunk AS id, hidden
