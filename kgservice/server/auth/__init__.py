"""Per-user API keys with roles (reader ⊂ writer ⊂ admin), the same check for REST and MCP.

The keys themselves live in :mod:`kgservice.apikeys` (the knowledge base's ``key_store()``)."""

from kgservice.apikeys import ApiKey, KeyError_, KeyStore, Principal, Role, split_key

__all__ = ["ApiKey", "KeyError_", "KeyStore", "Principal", "Role", "split_key"]
