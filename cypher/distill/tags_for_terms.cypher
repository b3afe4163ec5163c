// Tags a question names, by their name or a colloquial alias (both normalised). Tags are few next to
// chunks; the alias test scans them.
MATCH (t:Tag)
WHERE t.name_key IN $terms OR any(a IN coalesce(t.alias_keys, []) WHERE a IN $terms)
RETURN t.name AS name, t.class AS class, t.name_key IN $terms AS direct
ORDER BY direct, t.name
