// stage_begin: open a staging area for one big ingest batch (see stage_units).
// parameters: $stage (unique id), $now (epoch seconds). returns: nothing.
// The :IngestStage node records when the stage last made progress, so a stage left by a
// crashed writer can be recognised as abandoned and removed (stage_abandoned).
CREATE (:IngestStage {ws: $ws, id: $stage, started: $now, heartbeat: $now})
