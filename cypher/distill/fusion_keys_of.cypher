// Template ({label}: Topic or FactItem): the fusion keys (null when the node was written without them), path
// text and document of the nodes $ids (kg.layers.distilled.pseudograph keys them and builds their lookups).
UNWIND $ids AS id
MATCH (x:{label} {id: id})
RETURN x.id AS id, x.document_id AS document_id, x.fusion_keys AS keys, coalesce(x.path_text, '') AS path_text
