// Fusion keys for fact items written without them (kg.layers.distilled.stored_keys).
UNWIND $rows AS row
MATCH (f:FactItem {id: row.id})
SET f.fusion_keys = row.keys
