// life_superseding: kg restore's live units that may supersede archived units, so each archived
// copy gets the superseded_by list a retraction gives it (an undo links them again). The
// candidates are the units whose JSON mentions an archived id; the client reads their
// supersedes lists.
// parameters: $ids (archived unit ids)
// returns per candidate: id (the archived id), unit, json
UNWIND $ids AS id
MATCH (n:Unit {ws: $ws}) WHERE n.json CONTAINS ('"' + id + '"')
RETURN id, n.id AS unit, n.json AS json
