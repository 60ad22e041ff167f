// schema: constraints and indexes, applied idempotently on every connect. Identity is (ws, id):
// every stored node kind carries its workspace (docs/workspaces.md); uniqueness is per workspace.
// parameters: none. returns: nothing.
// Statements are separated by ';' at line end; each is IF NOT EXISTS.
CREATE CONSTRAINT node_ws_id IF NOT EXISTS FOR (n:Node) REQUIRE (n.ws, n.id) IS UNIQUE;
CREATE CONSTRAINT unit_ws_id IF NOT EXISTS FOR (u:Unit) REQUIRE (u.ws, u.id) IS UNIQUE;
// ingest's duplicate check (live_fact_units): subject id + U+001F + argument-0 id
CREATE INDEX unit_ws_probe IF NOT EXISTS FOR (u:Unit) ON (u.ws, u.probe);
// Indexes no statement reads, dropped from stores that have them: every unit and node written
// paid an entry in each at commit. Node.kind / Node.label and Unit.doc / Unit.family are only
// ever read from a node found otherwise (by (ws, id) or along an edge); Unit.probe alone is
// the single-property twin of unit_ws_probe, and every probe seek names the workspace.
DROP INDEX node_kind IF EXISTS;
DROP INDEX node_label IF EXISTS;
DROP INDEX unit_doc IF EXISTS;
DROP INDEX unit_family IF EXISTS;
DROP INDEX unit_probe IF EXISTS;
CREATE CONSTRAINT kgschema_id IF NOT EXISTS FOR (m:KgSchema) REQUIRE m.id IS UNIQUE;
// entity-resolution decisions (merge_decision*.cypher): one per pair of label keys
CREATE CONSTRAINT kgmerge_ws_pair IF NOT EXISTS FOR (d:KgMergeDecision) REQUIRE (d.ws, d.a, d.b) IS UNIQUE;
// duplicates merged away at ingest (aliases_*.cypher)
CREATE CONSTRAINT unit_alias_ws_id IF NOT EXISTS FOR (a:UnitAlias) REQUIRE (a.ws, a.id) IS UNIQUE;
CREATE INDEX unit_alias_unit IF NOT EXISTS FOR (a:UnitAlias) ON (a.unit);
// cache coherence (kgservice/stores/changelog.py) and durable jobs (kgservice/jobs/)
CREATE CONSTRAINT kgmeta_ws_id IF NOT EXISTS FOR (m:KgMeta) REQUIRE (m.ws, m.id) IS UNIQUE;
CREATE CONSTRAINT kgchange_ws_seq IF NOT EXISTS FOR (c:KgChange) REQUIRE (c.ws, c.seq) IS UNIQUE;
CREATE CONSTRAINT kgjob_ws_id IF NOT EXISTS FOR (j:KgJob) REQUIRE (j.ws, j.id) IS UNIQUE;
CREATE CONSTRAINT kgjob_ws_idem IF NOT EXISTS FOR (j:KgJob) REQUIRE (j.ws, j.idem) IS UNIQUE;
CREATE INDEX kgjob_status IF NOT EXISTS FOR (j:KgJob) ON (j.status);
CREATE INDEX kgjob_ws_status IF NOT EXISTS FOR (j:KgJob) ON (j.ws, j.status);
// the knowledge lifecycle (life_*.cypher): documents, archived (retracted) units, changes
CREATE CONSTRAINT document_ws_id IF NOT EXISTS FOR (d:Document) REQUIRE (d.ws, d.id) IS UNIQUE;
CREATE CONSTRAINT retracted_unit_ws_id IF NOT EXISTS FOR (r:RetractedUnit) REQUIRE (r.ws, r.id) IS UNIQUE;
CREATE CONSTRAINT change_ws_id IF NOT EXISTS FOR (c:Change) REQUIRE (c.ws, c.id) IS UNIQUE;
CREATE INDEX change_ord IF NOT EXISTS FOR (c:Change) ON (c.ord);
// staging of big ingest batches (stage_*.cypher): invisible labels, found by stage id
CREATE INDEX staged_node_id IF NOT EXISTS FOR (n:StagedNode) ON (n.id, n.stage);
CREATE INDEX staged_node_stage IF NOT EXISTS FOR (n:StagedNode) ON (n.stage);
CREATE INDEX staged_unit_stage IF NOT EXISTS FOR (u:StagedUnit) ON (u.stage);
CREATE INDEX staged_unit_id IF NOT EXISTS FOR (u:StagedUnit) ON (u.id, u.stage);
CREATE CONSTRAINT ingest_stage_ws_id IF NOT EXISTS FOR (s:IngestStage) REQUIRE (s.ws, s.id) IS UNIQUE
