// schema_2: schema step 2 (kgservice/stores/schema.py): web sign-ins and server heartbeats kept in the
// store, and an index for pruning finished jobs. Only adds: older releases keep working beside it.
// Statements are separated by ';' at line end; each is IF NOT EXISTS.
CREATE CONSTRAINT kgsession_id IF NOT EXISTS FOR (s:KgSession) REQUIRE s.id IS UNIQUE;
CREATE INDEX kgsession_expires IF NOT EXISTS FOR (s:KgSession) ON (s.expires_ms);
CREATE CONSTRAINT kgserver_id IF NOT EXISTS FOR (s:KgServer) REQUIRE s.id IS UNIQUE;
CREATE INDEX kgjob_updated IF NOT EXISTS FOR (j:KgJob) ON (j.updated_ms)
