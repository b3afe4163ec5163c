// A replaced document's kept chunks (visible, or hidden by a replacement in several transactions): their links
// in the old version's reading order go (the new version's are written with it), and of their distillation
// marks only the layers in $carried stay. A table's chunk also loses its rows and its `tables` mark: they hang
// off the table, which the new version writes anew. The layers not carried are distilled over a document's
// parts, which the new version changes, so they run again.
UNWIND $ids AS id
CALL (id) {
  MATCH (c:Chunk {id: id})
  RETURN c
  UNION
  MATCH (c:HiddenChunk {id: id})
  RETURN c
}
CALL (c) {
  MATCH (c)-[r:NEXT]->()
  DELETE r
}
CALL (c) {
  MATCH (c)-[:HAS_ROW]->(r:Row) WHERE c.kind = 'table'
  DETACH DELETE r
}
WITH c, CASE WHEN c.kind = 'table' THEN [x IN $carried WHERE x <> 'tables'] ELSE $carried END AS carried
SET c.distilled = [x IN coalesce(c.distilled, []) WHERE x IN carried],
    c.distill_failed = [x IN coalesce(c.distill_failed, []) WHERE x IN carried]
