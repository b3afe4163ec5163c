// New entities (MERGE on the key-derived id, so a retried transaction or a race creates one node).
UNWIND $rows AS row
MERGE (e:Entity {id: row.id})
ON CREATE SET e.key = row.key, e.name = row.name, e.type = row.type, e.aliases = row.aliases,
    e.block_keys = row.block_keys, e.source = row.source
WITH e, row WHERE e.embedding IS NULL
CALL db.create.setNodeVectorProperty(e, 'embedding', row.embedding)
