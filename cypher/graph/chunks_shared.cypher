// Shared nodes the chunks $ids (visible or hidden) reach; deleted with them only if orphaned.
UNWIND $ids AS id
CALL (id) {
  MATCH (c:Chunk {id: id})
  RETURN c
  UNION
  MATCH (c:HiddenChunk {id: id})
  RETURN c
}
MATCH (c)-[:MENTIONS|TAGGED]->(x)
RETURN collect(DISTINCT x.id) AS ids
