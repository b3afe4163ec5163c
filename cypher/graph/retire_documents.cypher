// The first step of deleting documents in several transactions: each is marked `deleting` (a re-load then
// sees a changed document, and a deletion that was interrupted is finished by the next one). Returns the
// documents an earlier deletion had already begun.
UNWIND $ids AS id
MATCH (d:Document {id: id})
WITH d, coalesce(d.deleting, false) AS resumed
SET d.deleting = true
RETURN d.id AS id, resumed
