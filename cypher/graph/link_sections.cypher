// A section hangs off its parent section, or off its document for the root. Run after create_sections:
// a MATCH cannot see nodes created earlier in the same statement.
UNWIND $rows AS row
MATCH (s:Section {id: row.id})
OPTIONAL MATCH (ps:Section {id: row.parent_id})
OPTIONAL MATCH (pd:Document {id: row.parent_id})
WITH s, coalesce(ps, pd) AS parent
CREATE (parent)-[:HAS_SECTION]->(s)
