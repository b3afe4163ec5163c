// A document by id or by source path, with the columns of graph/list_documents.
MATCH (d:Document)
WHERE d.id = $key OR d.source = $key
RETURN d.id AS id, d.title AS title, d.source AS source, d.format AS format, d.pages AS pages,
       d.sha256 AS sha256, toString(d.loaded_at) AS loaded_at,
       COUNT { (:Chunk {document_id: d.id}) } AS chunks
