// Template ({label}): $limit nodes written since their last fusion (kg.layers.distilled.pseudograph: fusion
// resumes). A slice loses the flag in the transaction that fuses it, so the next read finds the next slice:
// an index seek of $limit entries each time, whether a whole corpus or one new document is pending.
MATCH (x:{label})
USING INDEX x:{label}(fusion_pending)
WHERE x.fusion_pending = true
RETURN x.id AS id
LIMIT $limit
