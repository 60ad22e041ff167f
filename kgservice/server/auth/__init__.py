"""Per-user API keys with roles (reader ⊂ writer ⊂ admin), the same check for REST and MCP."""

from kgservice.server.auth.keys import ApiKey, KeyError_, Principal, Role, split_key
from kgservice.server.auth.store import KeyStore, Neo4jKeyStore, SqliteKeyStore, open_key_store

__all__ = ["ApiKey", "KeyError_", "KeyStore", "Neo4jKeyStore", "Principal", "Role", "SqliteKeyStore",
           "open_key_store", "split_key"]
