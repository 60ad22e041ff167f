// session_flash_take: the sealed flash waiting for $path, once: the write lock on the session
// makes two concurrent takes return it to one of them only.
// parameters: $id, $path
// returns: sealed (null when none waits for $path)
MATCH (s:KgSession {id: $id})
SET s._lock = true
REMOVE s._lock
WITH s, CASE WHEN s.flash_path = $path AND s.flash_until_ms > timestamp() THEN s.flash END AS sealed
FOREACH (_ IN CASE WHEN sealed IS NULL THEN [] ELSE [1] END |
  REMOVE s.flash, s.flash_path, s.flash_until_ms)
RETURN sealed
