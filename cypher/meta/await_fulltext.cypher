// Wait until eventually consistent full-text indexes have applied every committed write.
CALL db.index.fulltext.awaitEventuallyConsistentIndexRefresh()
