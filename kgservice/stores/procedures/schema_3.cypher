// schema_3: schema step 3 (kgservice/stores/schema.py), run by `kg migrate`: workspaces
// (docs/workspaces.md). Every node kind the service stores per knowledge base gets `ws`: the
// nodes stored before workspaces existed become the workspace `default` (in batches), and the
// single-property uniqueness constraints give way to (ws, id) ones (schema.cypher and, for the
// vectors, vectors_schema.cypher create those; they are created here too so the step stands
// alone). Keys, web sign-ins, server heartbeats and schema markers belong to the deployment and
// keep no `ws`. Older kgservice releases write nodes without `ws`, so this step locks them out
// (compat 3). Idempotent: a step that stopped half-way is run again whole (only nodes still
// without `ws` are touched; every DROP / CREATE is IF [NOT] EXISTS).
// parameters: none. returns: nothing.
// Statements are separated by ';' at line end.
MATCH (n)
WHERE n.ws IS NULL AND (n:Node OR n:Unit OR n:UnitAlias OR n:Document OR n:RetractedUnit OR n:Change
  OR n:KgMeta OR n:KgChange OR n:KgJob OR n:KgSavedResult OR n:KgCommunities OR n:KgMergeDecision
  OR n:KgVector OR n:KgVectorSet OR n:KgMirrorChunk OR n:KgRestore OR n:StagedNode OR n:StagedUnit
  OR n:IngestStage)
CALL (n) { SET n.ws = 'default' } IN TRANSACTIONS OF 10000 ROWS;
DROP CONSTRAINT node_id IF EXISTS;
DROP CONSTRAINT unit_id IF EXISTS;
DROP CONSTRAINT kgmerge_pair IF EXISTS;
DROP CONSTRAINT unit_alias_id IF EXISTS;
DROP CONSTRAINT kgmeta_id IF EXISTS;
DROP CONSTRAINT kgchange_seq IF EXISTS;
DROP CONSTRAINT kgjob_id IF EXISTS;
DROP CONSTRAINT kgjob_idem IF EXISTS;
DROP CONSTRAINT document_id IF EXISTS;
DROP CONSTRAINT retracted_unit_id IF EXISTS;
DROP CONSTRAINT change_id IF EXISTS;
DROP CONSTRAINT ingest_stage_id IF EXISTS;
DROP CONSTRAINT kgvector_node_id IF EXISTS;
DROP CONSTRAINT kgvectorset_id IF EXISTS;
CREATE CONSTRAINT node_ws_id IF NOT EXISTS FOR (n:Node) REQUIRE (n.ws, n.id) IS UNIQUE;
CREATE CONSTRAINT unit_ws_id IF NOT EXISTS FOR (u:Unit) REQUIRE (u.ws, u.id) IS UNIQUE;
CREATE CONSTRAINT kgmerge_ws_pair IF NOT EXISTS FOR (d:KgMergeDecision) REQUIRE (d.ws, d.a, d.b) IS UNIQUE;
CREATE CONSTRAINT unit_alias_ws_id IF NOT EXISTS FOR (a:UnitAlias) REQUIRE (a.ws, a.id) IS UNIQUE;
CREATE CONSTRAINT kgmeta_ws_id IF NOT EXISTS FOR (m:KgMeta) REQUIRE (m.ws, m.id) IS UNIQUE;
CREATE CONSTRAINT kgchange_ws_seq IF NOT EXISTS FOR (c:KgChange) REQUIRE (c.ws, c.seq) IS UNIQUE;
CREATE CONSTRAINT kgjob_ws_id IF NOT EXISTS FOR (j:KgJob) REQUIRE (j.ws, j.id) IS UNIQUE;
CREATE CONSTRAINT kgjob_ws_idem IF NOT EXISTS FOR (j:KgJob) REQUIRE (j.ws, j.idem) IS UNIQUE;
CREATE CONSTRAINT document_ws_id IF NOT EXISTS FOR (d:Document) REQUIRE (d.ws, d.id) IS UNIQUE;
CREATE CONSTRAINT retracted_unit_ws_id IF NOT EXISTS FOR (r:RetractedUnit) REQUIRE (r.ws, r.id) IS UNIQUE;
CREATE CONSTRAINT change_ws_id IF NOT EXISTS FOR (c:Change) REQUIRE (c.ws, c.id) IS UNIQUE;
CREATE CONSTRAINT ingest_stage_ws_id IF NOT EXISTS FOR (s:IngestStage) REQUIRE (s.ws, s.id) IS UNIQUE;
CREATE CONSTRAINT kgvector_ws_node_id IF NOT EXISTS FOR (v:KgVector) REQUIRE (v.ws, v.node_id) IS UNIQUE;
CREATE CONSTRAINT kgvectorset_ws_id IF NOT EXISTS FOR (m:KgVectorSet) REQUIRE (m.ws, m.id) IS UNIQUE
