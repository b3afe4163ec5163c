// After a deletion, the surviving entities among $ids keep as aliases only the names their remaining
// mentions use (sorted), hidden chunks' included (the kept chunks of a document being replaced). An entity
// with a mention written before mentions kept names is left as it is.
MATCH (e:Entity) WHERE e.id IN $ids
CALL (e) {
  OPTIONAL MATCH (c)-[m:MENTIONS]->(e) WHERE c:Chunk OR c:HiddenChunk
  RETURN count(m) AS mentions, count(m.names) AS named
}
WITH e WHERE mentions = named
CALL (e) {
  OPTIONAL MATCH (c)-[m:MENTIONS]->(e) WHERE c:Chunk OR c:HiddenChunk
  UNWIND coalesce(m.names, []) AS name
  WITH DISTINCT e, name WHERE name <> e.name
  ORDER BY name
  RETURN collect(name) AS aliases
}
SET e.aliases = aliases
