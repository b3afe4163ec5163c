// Template ({label}: Topic or FactItem): fusion keys for nodes written without them (kg.layers.distilled.stored_keys).
UNWIND $rows AS row
MATCH (x:{label} {id: row.id})
SET x.fusion_keys = row.keys
RETURN count(*) AS count
