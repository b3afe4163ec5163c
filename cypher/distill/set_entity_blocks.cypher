// Block keys for entities written before names had them (kg.layers.distilled.resolve.ensure_entity_blocks).
UNWIND $rows AS row
MATCH (e:Entity {id: row.id})
SET e.block_keys = row.block_keys
