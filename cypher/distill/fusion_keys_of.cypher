// The fusion keys and document of the fact items $ids (kg.layers.distilled.pseudograph builds their lookups).
UNWIND $ids AS id
MATCH (x:FactItem {id: id})
RETURN x.id AS id, x.document_id AS document_id, coalesce(x.fusion_keys, []) AS keys
