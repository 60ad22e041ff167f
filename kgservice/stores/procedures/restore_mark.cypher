// restore_mark: record that a `kg restore --replace` is under way (before the wipe), so a restore
// killed half-way is named by `kg doctor` and resumed by `kg doctor --repair` instead of looking
// like a merely drifted store. The node survives the wipe (see wipe.cypher).
// parameters: $path (the dump's absolute path), $sha256 (of the dump file), $units (in the dump), $started_at (ISO)
// returns: nothing
MERGE (m:KgRestore {ws: $ws, id: 'current'})
SET m.path = $path, m.sha256 = $sha256, m.units = $units, m.started_at = $started_at
