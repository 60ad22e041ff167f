"""The server fixtures (a knowledge base, an app, a key per role) for the REST and MCP tests here."""

from tests.server.conftest import app, client, kb, keys, settings  # noqa: F401
