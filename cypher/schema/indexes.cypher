// Lookups that are not by id.
CREATE INDEX document_source IF NOT EXISTS FOR (n:Document) ON (n.source);
CREATE INDEX chunk_document IF NOT EXISTS FOR (n:Chunk) ON (n.document_id);
CREATE INDEX entity_key IF NOT EXISTS FOR (n:Entity) ON (n.key);
CREATE INDEX tag_name IF NOT EXISTS FOR (n:Tag) ON (n.name);
// Owned nodes carry their document's id: replacing or deleting a document finds them by index.
CREATE INDEX section_document IF NOT EXISTS FOR (n:Section) ON (n.document_id);
CREATE INDEX table_document IF NOT EXISTS FOR (n:Table) ON (n.document_id);
CREATE INDEX figure_document IF NOT EXISTS FOR (n:Figure) ON (n.document_id);
CREATE INDEX atom_document IF NOT EXISTS FOR (n:Atom) ON (n.document_id);
CREATE INDEX fact_document IF NOT EXISTS FOR (n:Fact) ON (n.document_id);
CREATE INDEX row_document IF NOT EXISTS FOR (n:Row) ON (n.document_id);
CREATE INDEX topic_document IF NOT EXISTS FOR (n:Topic) ON (n.document_id);
CREATE INDEX route_document IF NOT EXISTS FOR (n:Route) ON (n.document_id);
CREATE INDEX factitem_document IF NOT EXISTS FOR (n:FactItem) ON (n.document_id);
// Topics and fact items awaiting cross-document fusion (a resumed run finds them without a label scan).
CREATE INDEX topic_fusion_pending IF NOT EXISTS FOR (n:Topic) ON (n.fusion_pending);
CREATE INDEX factitem_fusion_pending IF NOT EXISTS FOR (n:FactItem) ON (n.fusion_pending);
// Resolving REFERENCES by file name or title, and finding documents that have links.
CREATE INDEX document_source_name IF NOT EXISTS FOR (n:Document) ON (n.source_name);
CREATE INDEX document_title_key IF NOT EXISTS FOR (n:Document) ON (n.title_key);
CREATE INDEX document_has_links IF NOT EXISTS FOR (n:Document) ON (n.has_links);
// The one term a title is looked up by when other documents' chunks may mention it (kg.layers.resource.references).
CREATE INDEX document_mention_key IF NOT EXISTS FOR (n:Document) ON (n.mention_key);
// Documents whose title mentions are still to be linked, and the documents one many-document file holds.
CREATE INDEX document_mentions_pending IF NOT EXISTS FOR (n:Document) ON (n.mentions_pending);
CREATE INDEX document_file IF NOT EXISTS FOR (n:Document) ON (n.file);
// The newest load, which the ppr retriever's projection follows (retrieval/ppr_seeds returns it).
CREATE INDEX document_loaded_at IF NOT EXISTS FOR (n:Document) ON (n.loaded_at);
// Chunks retrieval does not see (label HiddenChunk, which no retrieval index covers): a large document's new
// version while it is written in several transactions, an old one while it is deleted in several.
CREATE INDEX hidden_chunk_id IF NOT EXISTS FOR (n:HiddenChunk) ON (n.id);
CREATE INDEX hidden_chunk_document IF NOT EXISTS FOR (n:HiddenChunk) ON (n.document_id);
