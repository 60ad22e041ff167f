// life_restore_archive: kg restore's archived units (those that are not live units), in its
// lifecycle transaction before the documents (whose FROM edges may point at them).
// parameters: $units (list of {id, json, change, at, reason, superseded_by: the live units
// whose supersedes names it})
// returns: archived (how many were written)
UNWIND $units AS r
WITH r WHERE NOT EXISTS { MATCH (:Unit {ws: $ws, id: r.id}) }
MERGE (x:RetractedUnit {ws: $ws, id: r.id})
SET x.json = r.json, x.change = r.change, x.at = r.at, x.reason = r.reason,
    x.superseded_by = r.superseded_by
RETURN count(x) AS archived
