// restore_get: the record of a `kg restore --replace` that has not finished (restore_mark), if any.
// parameters: none
// returns: path, sha256, units, started_at
MATCH (m:KgRestore {ws: $ws, id: 'current'})
RETURN m.path AS path, m.sha256 AS sha256, m.units AS units, m.started_at AS started_at
