// A document whose title mentions could not be linked (its query failed): it is no longer pending, so it
// cannot fail every later load's linking, and the reason is kept on it (see kg.layers.resource.references).
MATCH (d:Document {id: $id})
REMOVE d.mentions_pending
SET d.mentions_error = $error
