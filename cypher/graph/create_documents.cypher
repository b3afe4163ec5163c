// Documents, one row each ({id, props, embedding}): the large-document path of the writer and the benchmark's
// naive writer. Sets what graph/create_corpus sets.
UNWIND $rows AS row
CREATE (d:Document {id: row.id})
SET d += row.props, d.has_links = size(row.props.link_targets) > 0, d.loaded_at = datetime(),
    d.mentions_pending = true
WITH d, row WHERE row.embedding IS NOT NULL
CALL db.create.setNodeVectorProperty(d, 'embedding', row.embedding)
