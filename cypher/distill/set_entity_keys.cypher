// Block keys for entities written without them (kg.layers.distilled.stored_keys).
UNWIND $rows AS row
MATCH (e:Entity {id: row.id})
SET e.block_keys = row.keys
RETURN count(*) AS count
