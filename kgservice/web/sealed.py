"""A form's outcome sealed for the browser that caused it: AES-GCM under a key derived from the
session's cookie token, which the store never holds (it keeps sha256 of the token). So a
flash kept in the shared store (a new API key's secret, shown once on the next page) can be
read back only by a request carrying that cookie, on whichever server it lands.

>>> sealed = seal("tok", {"created": {"key": "kg_x"}})
>>> unseal("tok", sealed), unseal("other", sealed)
({'created': {'key': 'kg_x'}}, None)
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
from typing import Any

_CONTEXT = b"kgservice web flash v1"


def _key(token: str) -> bytes:
    return hmac.new(token.encode(), _CONTEXT, hashlib.sha256).digest()


def seal(token: str, data: dict[str, Any]) -> str:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    nonce = os.urandom(12)
    box = AESGCM(_key(token)).encrypt(nonce, json.dumps(data, separators=(",", ":")).encode(), _CONTEXT)
    return base64.urlsafe_b64encode(nonce + box).decode()


def unseal(token: str, sealed: str) -> dict[str, Any] | None:
    """The data, or None when ``sealed`` was not made for ``token`` (or was altered)."""
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    try:
        raw = base64.urlsafe_b64decode(sealed.encode())
        data = AESGCM(_key(token)).decrypt(raw[:12], raw[12:], _CONTEXT)
    except (InvalidTag, ValueError):
        return None
    return json.loads(data)
