// The documents read from one file (a QA corpus holds many), with the columns of graph/list_documents.
MATCH (d:Document {file: $file})
RETURN d.id AS id, d.title AS title, d.source AS source, d.format AS format, d.pages AS pages,
       d.sha256 AS sha256, toString(d.loaded_at) AS loaded_at,
       COUNT { (:Chunk {document_id: d.id}) } AS chunks
ORDER BY d.source
