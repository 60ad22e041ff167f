// jobs_submit: queue an ingest job, or return the existing one with the same idempotency
// identity (`idem`: user + key; a job without a key gets a unique one). The unique
// constraint on KgJob.idem makes concurrent submits with one key create one job.
// parameters: $idem, $id, $kind, $user, $key, $payload (JSON text), $sha, $max_attempts, $message
// returns: job (all properties), created (bool)
MERGE (j:KgJob {ws: $ws, idem: $idem})
ON CREATE SET j.id = $id, j.kind = $kind, j.status = 'queued', j.user = $user, j.idempotency_key = $key,
  j.payload = $payload, j.input_sha256 = $sha, j.created_ms = timestamp(), j.updated_ms = timestamp(),
  j.attempts = 0, j.max_attempts = $max_attempts,
  j.ev_status = ['queued'], j.ev_msg = [$message], j.ev_at = [timestamp()]
RETURN j {.*} AS job, j.id = $id AS created
