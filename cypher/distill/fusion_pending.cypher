// Template ({label}): nodes written since their last fusion (kg.layers.distilled.pseudograph: fusion resumes).
MATCH (x:{label})
WHERE x.fusion_pending = true
RETURN x.id AS id
ORDER BY id
