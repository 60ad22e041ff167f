"""The set of workspaces of one Neo4j database (docs/workspaces.md): every node the service
stores per knowledge base carries its workspace (``ws``), so listing them reads the meta nodes'
``ws``, a rename rewrites the property in batches and a delete removes the workspace's nodes in
batches. Operations on the set, not on one knowledge base (:mod:`kgservice.workspaces` calls
them): each names the workspace it acts on explicitly (``ws=``), which the connection then does
not replace with its own."""

from __future__ import annotations

from kgservice.config import DEFAULT_WORKSPACE
from kgservice.stores.neo4j.connection import Neo4jConnection


class Neo4jWorkspaces(Neo4jConnection):
    def workspace_names(self) -> list[str]:
        """Every workspace with something stored, ``default`` first (it always exists)."""
        found = [r["name"] for r in self.read("workspaces_list")]
        return [DEFAULT_WORKSPACE, *(n for n in found if n != DEFAULT_WORKSPACE)]

    def workspace_exists(self, name: str) -> bool:
        return name == DEFAULT_WORKSPACE or bool(self.read("workspace_exists", ws=name)[0]["exists"])

    def create_workspace(self, name: str) -> bool:
        """Mark ``name`` as a workspace (it holds nothing yet); False when it existed."""
        return bool(self.write("workspace_mark", ws=name)[0]["created"])

    def workspace_served(self, name: str) -> int:
        """How many live ``kg serve`` processes serve ``name`` (their heartbeats record it)."""
        return int(self.read("servers_serving", ws=name)[0]["live"])

    def rename_workspace(self, old: str, new: str) -> None:
        self.write_statements("workspace_rename", ws=old, new=new)

    def delete_workspace(self, name: str) -> None:
        self.write_statements("workspace_delete", ws=name)
