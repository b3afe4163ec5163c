// ppr: what the GDS projection of ppr_project.cypher was built from, as counts the count store answers at once
// and the newest Document.loaded_at (document_loaded_at index). A load, a delete, a re-load and a distillation
// each change one of them, and a changed graph gets a new projection (kg.retrieval.methods.ppr).
CALL () {
  MATCH (d:Document) WHERE d.loaded_at IS NOT NULL
  RETURN toString(d.loaded_at) AS loaded_at ORDER BY d.loaded_at DESC LIMIT 1
  UNION ALL
  RETURN null AS loaded_at
}
WITH collect(loaded_at) AS newest
RETURN COUNT { (:Chunk) } AS chunks, COUNT { (:Entity) } AS entities, COUNT { (:Fact) } AS facts,
       COUNT { ()-[:MENTIONS]->() } AS mentions, COUNT { ()-[:SUBJECT]->() } AS subjects,
       COUNT { ()-[:OBJECT]->() } AS objects, COUNT { ()-[:REFERENCES]->() } AS references,
       COUNT { (:Document) } AS documents, coalesce(newest[0], '') AS loaded_at
