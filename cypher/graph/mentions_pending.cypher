// Documents written since their title mentions were last linked (see kg.layers.resource.references).
MATCH (d:Document) WHERE d.mentions_pending = true
RETURN d.id AS id
LIMIT $limit
