// Template ({label}: Topic or FactItem): the fusion keys and document of the nodes $ids
// (kg.layers.distilled.pseudograph builds their lookups).
UNWIND $ids AS id
MATCH (x:{label} {id: id})
RETURN x.id AS id, x.document_id AS document_id, coalesce(x.fusion_keys, []) AS keys
