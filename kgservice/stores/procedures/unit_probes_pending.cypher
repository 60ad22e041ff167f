// unit_probes_pending: whether stored units may still lack Unit.probe (units written before it
// existed): true until unit_probes_backfill has run to its end once and left its marker.
// parameters: none. returns: todo (bool)
OPTIONAL MATCH (m:KgSchema {id: 'unit_probe'})
RETURN m IS NULL AS todo
