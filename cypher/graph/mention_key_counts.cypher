// How many documents each term already keys (Document.mention_key, see kg.layers.resource.references): a new
// title is keyed by its least used term, so no key's documents grow with the corpus.
UNWIND $terms AS term
RETURN term, COUNT { MATCH (d:Document {mention_key: term}) } AS documents
