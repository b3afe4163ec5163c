// The centroid vectors of a large document's sections ({id, embedding}, is_document false) or of the document
// itself (true): known only once every chunk is embedded, a batch at a time as they are written, so they are set
// in the transaction that reveals the chunks.
UNWIND $rows AS row
OPTIONAL MATCH (s:Section {id: row.id}) WHERE NOT $is_document
OPTIONAL MATCH (d:Document {id: row.id}) WHERE $is_document
WITH row, coalesce(s, d) AS n WHERE n IS NOT NULL
CALL db.create.setNodeVectorProperty(n, 'embedding', row.embedding)
