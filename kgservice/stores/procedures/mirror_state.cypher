// mirror_state: the graphify mirror kept in the store (kgservice/export/shared_mirror.py): the
// change-log version it was built at, its digest and chunk count, and who is building the next one.
// parameters: none
// returns: version, digest, chunks, owner, building (the version being built), leased (the lease is live);
//          no row before the first build
MATCH (m:KgMeta {ws: $ws, id: 'graphify_mirror'})
RETURN m.version AS version, m.digest AS digest, m.chunks AS chunks, m.owner AS owner,
       m.building AS building, coalesce(m.lease_until, 0) >= timestamp() AS leased
