// session_flash_set: keep a form's sealed outcome for the next GET of $path (replaces any older one).
// parameters: $id, $path, $sealed, $ttl_ms
// returns: nothing
MATCH (s:KgSession {id: $id})
SET s.flash_path = $path, s.flash = $sealed, s.flash_until_ms = timestamp() + $ttl_ms
