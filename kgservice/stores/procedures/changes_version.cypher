// changes_version: the cache version (the number of changes ever recorded; 0 before the first).
// Every app server reads it before serving from its caches (docs/SERVICE.md §5.6): one small read.
// parameters: none
// returns: version
OPTIONAL MATCH (m:KgMeta {ws: $ws, id: 'state'})
RETURN coalesce(m.version, 0) AS version
