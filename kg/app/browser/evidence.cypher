// The evidence of an answer: each cited chunk with its document and section path, and the atoms, facts
// and entities distilled from it. $chunk_ids is replaced by a literal list for the Browser's editor.
MATCH path = (d:Document)-[:HAS_SECTION*1..]->(:Section)-[:HAS_CHUNK]->(c:Chunk)
WHERE c.id IN $chunk_ids
RETURN path,
       COLLECT { MATCH p = (:Atom)-[:ATOM_OF]->(c) RETURN p } AS atoms,
       COLLECT { MATCH p = (:Fact)-[:FACT_OF]->(c) RETURN p } AS facts,
       COLLECT { MATCH p = (c)-[:MENTIONS]->(:Entity) RETURN p } AS entities
