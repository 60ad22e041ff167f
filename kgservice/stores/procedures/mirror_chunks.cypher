// mirror_chunks: the stored graphify mirror's pieces of version $version, in order.
// parameters: $version
// returns: seq, data
MATCH (c:KgMirrorChunk {ws: $ws, version: $version})
RETURN c.seq AS seq, c.data AS data ORDER BY seq
