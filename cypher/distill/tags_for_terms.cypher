// Tags a question names, by their name or a colloquial alias (both normalised): each query of $queries is an
// OR of quoted terms, every term whole (the tag_keys index keeps each key as one token), so the lookup seeks
// terms and does not grow with the number of tags. The exact test keeps only whole-key matches.
UNWIND $queries AS query
CALL db.index.fulltext.queryNodes('tag_keys', query) YIELD node AS t
WITH DISTINCT t
WHERE t.name_key IN $terms OR any(a IN coalesce(t.alias_keys, []) WHERE a IN $terms)
RETURN t.name AS name, t.class AS class, t.name_key IN $terms AS direct
ORDER BY direct, t.name
