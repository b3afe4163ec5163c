// A large document being written in several transactions: it has no content hash for the writer until
// graph/reveal_chunks ends its write, so an interrupted write is written again by the next load.
UNWIND $ids AS id
MATCH (d:Document {id: id})
SET d.loading = true
