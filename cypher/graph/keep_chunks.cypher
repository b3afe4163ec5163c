// A replaced document's kept chunks ({id, section_id, props}) take their place in the new version: its
// section, order, offsets and page. Text and vector are the same (the id is the text's), so neither is
// written again. Returns how many were found, which the writer checks.
UNWIND $rows AS row
MATCH (s:Section {id: row.section_id})
MATCH (c:Chunk {id: row.id})
SET c += row.props
CREATE (s)-[:HAS_CHUNK]->(c)
RETURN count(c) AS count
