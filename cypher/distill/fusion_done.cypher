// Template ({label}): fused, in the transaction that wrote their SIMILAR links.
UNWIND $ids AS id
MATCH (x:{label} {id: id})
REMOVE x.fusion_pending
