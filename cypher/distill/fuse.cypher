// Template ({label}: the fused nodes' label, {fusion_label}: their fusion nodes').
// Each group's fusion node: the first by id of those its members already belong to, or a new one. The others
// (a node of this group links groups that earlier slices or runs fused apart) hand it their members and go, so
// a group stays one connected component (kg.layers.distilled.pseudograph._groups).
UNWIND $rows AS row
MERGE (s:{fusion_label} {id: row.super_id})
WITH s, row
CALL (s, row) {
  UNWIND row.absorbed AS absorbed
  MATCH (o:{fusion_label} {id: absorbed})
  OPTIONAL MATCH (o)-[:SIMILAR]->(x:{label})
  WITH s, o, collect(x) AS xs
  FOREACH (x IN xs | MERGE (s)-[:SIMILAR]->(x))
  DETACH DELETE o
}
WITH s, row
UNWIND row.members AS member
MATCH (x:{label} {id: member})
MERGE (s)-[:SIMILAR]->(x)
RETURN count(*) AS count
