// keys_schema: one API key per key_id (the lookup handle of `kg_<key_id>_<secret>`).
// parameters: none
CREATE CONSTRAINT kg_api_key_id IF NOT EXISTS FOR (k:KgApiKey) REQUIRE k.key_id IS UNIQUE
