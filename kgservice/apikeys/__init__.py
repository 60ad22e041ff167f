"""API keys: the key format and roles (:mod:`.model`) and the store-independent key logic
(:mod:`.store`); each graph store supplies where its keys live (``store.key_store(...)``)."""

from kgservice.apikeys.model import ApiKey, KeyError_, Principal, Role, split_key
from kgservice.apikeys.store import KeyStore

__all__ = ["ApiKey", "KeyError_", "KeyStore", "Principal", "Role", "split_key"]
