// A document, its sections and its chunks in one statement: one row per document, with its sections
// (parents before children) and chunks as nested lists. Parents and sections are referred to by position
// in the row ($row.sections[i].parent: -1 is the document), so nothing created here has to be found again
// by an index lookup, and NEXT links the chunks in order. The writer compares the nodes created with the
// rows it sent. A new document awaits the linking of title mentions (kg.layers.resource.references).
UNWIND $rows AS row
CREATE (d:Document {id: row.id})
SET d += row.props, d.has_links = size(row.props.link_targets) > 0, d.loaded_at = datetime(),
    d.mentions_pending = true
WITH d, row
CALL (d, row) {
  WITH d, row WHERE row.embedding IS NOT NULL
  CALL db.create.setNodeVectorProperty(d, 'embedding', row.embedding)
}
CALL (d, row) {
  UNWIND row.sections AS sr
  CREATE (s:Section {id: sr.id})
  SET s += sr.props
  WITH s, sr
  CALL (s, sr) {
    WITH s, sr WHERE sr.embedding IS NOT NULL
    CALL db.create.setNodeVectorProperty(s, 'embedding', sr.embedding)
  }
  RETURN collect(s) AS sections
}
CALL (d, row, sections) {
  UNWIND range(0, size(sections) - 1) AS i
  WITH sections[i] AS s, CASE WHEN row.sections[i].parent < 0 THEN d ELSE sections[row.sections[i].parent] END AS p
  CREATE (p)-[:HAS_SECTION]->(s)
}
CALL (row, sections) {
  UNWIND row.chunks AS cr
  WITH cr, sections[cr.section] AS s
  CREATE (c:Chunk {id: cr.id})
  SET c += cr.props
  CREATE (s)-[:HAS_CHUNK]->(c)
  WITH c, cr
  CALL (c, cr) {
    WITH c, cr WHERE cr.embedding IS NOT NULL
    CALL db.create.setNodeVectorProperty(c, 'embedding', cr.embedding)
  }
  RETURN collect(c) AS chunks
}
CALL (chunks) {
  UNWIND range(1, size(chunks) - 1) AS i
  WITH chunks[i - 1] AS a, chunks[i] AS b
  CREATE (a)-[:NEXT]->(b)
}
