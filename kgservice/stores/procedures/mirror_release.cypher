// mirror_release: a builder that failed gives its lease back, so a waiting server builds at once.
// parameters: $owner
// returns: nothing
MATCH (m:KgMeta {ws: $ws, id: 'graphify_mirror'}) WHERE m.owner = $owner
SET m.owner = null, m.building = null, m.lease_until = null
