"""API keys: format, hashing, roles and the authenticated principal.

A key is ``kg_<key_id>_<secret>``: the 8-character ``key_id`` is the lookup handle (shown
in listings and logs), the 32-character secret never leaves the create call. Only
sha256(secret) is stored: the secret has ~190 bits of entropy, so a fast hash is enough
(no password stretching is needed against guessing), and verification is one lookup by
``key_id`` plus a constant-time comparison of the digests.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import string
from dataclasses import dataclass, field
from enum import Enum

from pydantic import BaseModel

from kgservice.config import DEFAULT_WORKSPACE  # a key made before workspaces is a key of it
from kgservice.errors import InputError

ALPHABET = string.ascii_letters + string.digits  # base62
KEY_ID_LEN = 8
SECRET_LEN = 32
KEY_RE = re.compile(rf"^kg_([A-Za-z0-9]{{{KEY_ID_LEN}}})_([A-Za-z0-9]{{{SECRET_LEN}}})$")
USER_RE = re.compile(r"^[\w.@+-]{1,64}$")


class KeyError_(InputError, ValueError):
    """A key command was given something invalid (unknown role, bad user name, unknown key id)."""


class Role(str, Enum):
    """reader ⊂ writer ⊂ admin: each role may do everything the roles before it may."""

    reader = "reader"
    writer = "writer"
    admin = "admin"

    @property
    def rank(self) -> int:
        return _RANK[self]

    def allows(self, needed: "Role") -> bool:
        return self.rank >= needed.rank

    @property
    def scopes(self) -> list[str]:
        return ["kg:read", "kg:write", "kg:admin"][: self.rank]

    @classmethod
    def parse(cls, value: str) -> "Role":
        try:
            return cls(str(value).strip().lower())
        except ValueError:
            raise KeyError_(f"role must be one of {', '.join(r.value for r in cls)}, got {value!r}") from None


_RANK = {Role.reader: 1, Role.writer: 2, Role.admin: 3}


class ApiKey(BaseModel):
    """A stored key, without its secret (what listings show). Keys belong to the deployment:
    ``workspaces`` maps each workspace the key may act in to its role there; ``role`` is the
    highest of them, worked out from them on every read (grants changed after creation leave
    the stored ``role`` behind; a key made before workspaces has ``{"default": role}``)."""

    key_id: str
    user: str
    role: Role
    created: str
    last_used: str | None = None
    revoked_at: str | None = None
    workspaces: dict[str, Role] = {}

    def model_post_init(self, __context: object) -> None:
        if not self.workspaces:
            self.workspaces = {DEFAULT_WORKSPACE: self.role}
        else:
            self.role = top_role(self.workspaces)

    @property
    def active(self) -> bool:
        return self.revoked_at is None


def top_role(workspaces: dict[str, Role]) -> Role:
    """The highest role of a key over its workspaces (what ``role`` of a listing shows)."""
    return max(workspaces.values(), key=lambda r: r.rank)


def parse_grants(specs: list[str], default_role: Role | str) -> dict[str, Role]:
    """``["team-a", "team-b:writer"]`` -> ``{"team-a": default_role, "team-b": writer}``: the
    workspaces of a new key, each with a role (``NAME`` alone takes ``default_role``). A name
    given twice, or a bad name or role, is an input error naming it."""
    from kgservice.config import check_workspace_name

    base = default_role if isinstance(default_role, Role) else Role.parse(default_role)
    out: dict[str, Role] = {}
    for spec in specs:
        name, _, role = str(spec).strip().partition(":")
        try:
            check_workspace_name(name)
        except Exception as exc:
            raise KeyError_(f"--workspace {spec!r}: {exc}") from None
        if name in out:
            raise KeyError_(f"--workspace {name!r} is given twice")
        out[name] = Role.parse(role) if role else base
    return out


def encode_grants(workspaces: dict[str, Role]) -> str:
    """How a key's workspaces are stored (one JSON text, in both stores)."""
    import json

    return json.dumps({k: v.value for k, v in sorted(workspaces.items())}, separators=(",", ":"))


def decode_grants(text: str | None, role: Role) -> dict[str, Role]:
    """A stored key's workspaces; a key stored before workspaces (no value) is a key of
    ``default`` with its role: existing keys keep working, with no step to run."""
    import json

    if not text:
        return {DEFAULT_WORKSPACE: role}
    return {k: Role(v) for k, v in json.loads(text).items()}


def only_admin(keys: list[ApiKey], key: ApiKey) -> bool:
    """``key`` is the one active admin key among ``keys``. A server (REST ``DELETE
    /v1/admin/keys/{id}``, the web page's Admin) refuses to revoke it: nobody could manage keys
    there afterwards. ``kg keys revoke`` beside the store may, since ``kg keys create`` can make
    another admin there."""
    return key.active and key.role is Role.admin and sum(k.active and k.role is Role.admin for k in keys) <= 1


@dataclass(frozen=True)
class Principal:
    """Who is calling: a key's user and role, or the local operator (stdio, --no-auth).

    ``workspaces`` is the key's workspaces with the role in each (None: the local operator,
    who may use every workspace with ``role``). A server narrows it to the one workspace a
    request acts in (:meth:`within`): ``role`` is then the role there, and ``workspace`` names it."""

    user: str
    role: Role
    key_id: str | None = None
    workspaces: dict[str, Role] | None = field(default=None, compare=False, hash=False)
    workspace: str | None = None

    def allows(self, needed: Role) -> bool:
        return self.role.allows(needed)

    def role_in(self, workspace: str) -> Role | None:
        """The role this caller has in ``workspace``, or None (not one of the key's)."""
        if self.workspaces is None:
            return self.role
        return self.workspaces.get(workspace)

    def within(self, workspace: str) -> "Principal | None":
        """This caller acting in ``workspace`` (its role there), or None if it may not."""
        role = self.role_in(workspace)
        if role is None:
            return None
        return Principal(self.user, role, self.key_id, self.workspaces, workspace)


def check_user(user: str) -> str:
    user = (user or "").strip()
    if not USER_RE.match(user):
        raise KeyError_(f"user must be 1-64 characters of letters, digits and . _ @ + -, got {user!r}")
    return user


def new_key() -> tuple[str, str, str]:
    """(full key to hand out once, key_id, sha256 hex of the secret to store)."""
    key_id = "".join(secrets.choice(ALPHABET) for _ in range(KEY_ID_LEN))
    secret = "".join(secrets.choice(ALPHABET) for _ in range(SECRET_LEN))
    return f"kg_{key_id}_{secret}", key_id, digest(secret)


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("ascii")).hexdigest()


def split_key(presented: str) -> tuple[str, str] | None:
    """(key_id, secret) of a well-formed key, else None (never raises: it is caller input)."""
    m = KEY_RE.match(presented.strip()) if presented else None
    return (m.group(1), m.group(2)) if m else None


_DUMMY = digest("x" * SECRET_LEN)


def secret_matches(secret: str, stored_digest: str | None) -> bool:
    """Constant-time comparison; an unknown key id still pays for one comparison."""
    return hmac.compare_digest(digest(secret), stored_digest or _DUMMY) and stored_digest is not None
