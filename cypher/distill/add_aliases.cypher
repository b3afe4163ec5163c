UNWIND $rows AS row
MATCH (e:Entity {id: row.id})
SET e.aliases = reduce(acc = coalesce(e.aliases, []), a IN row.aliases |
                       CASE WHEN a IN acc OR a = e.name THEN acc ELSE acc + a END)
