"""HMAC keys for pseudonym keys and the keyed-hash operator.

* ``ANONSTREAM_PSEUDONYM_KEY`` — the current key (any string; ≥ 16 bytes recommended; ``hex:``/``b64:``
  prefixes decode binary keys).
* ``ANONSTREAM_PSEUDONYM_KEY_PREVIOUS`` — optional, the key being rotated out.

Rotation semantics:
* Pseudonym stores address an entity by ``HMAC(current, entity)``. When that address is unknown and a
  previous key is set, the store looks the entity up under ``HMAC(previous, entity)`` and, if found, copies
  the surrogate to the current address: surrogates stay the same across a rotation, and entries migrate
  lazily as they are used. Entries never used during the rotation window expire with their TTL.
* The keyed-hash operator always emits ``HMAC(current, …)``: hashed output changes when the key changes
  (that is the point of rotating it); ``verify`` accepts digests made with either key.
* Once the TTL of the store has passed since the rotation, drop the previous key.

A service must call ``KeyRing.from_env(required=True)``: a missing key is a startup error. The embedded
runner may use ``KeyRing.ephemeral()`` (a random per-run key: pseudonyms are consistent within the run only).
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
from dataclasses import dataclass

ENV_KEY = "ANONSTREAM_PSEUDONYM_KEY"
ENV_PREVIOUS = "ANONSTREAM_PSEUDONYM_KEY_PREVIOUS"


class MissingKeyError(RuntimeError):
    pass


def _decode(value: str) -> bytes:
    if value.startswith("hex:"):
        return bytes.fromhex(value[4:])
    if value.startswith("b64:"):
        return base64.b64decode(value[4:])
    return value.encode("utf-8")


@dataclass(frozen=True)
class KeyRing:
    current: bytes
    previous: bytes | None = None
    ephemeral_key: bool = False

    @classmethod
    def from_env(cls, required: bool = True, environ: dict[str, str] | None = None) -> "KeyRing":
        env = os.environ if environ is None else environ
        cur = env.get(ENV_KEY, "")
        if not cur:
            if required:
                raise MissingKeyError(
                    f"{ENV_KEY} is not set: the pseudonym HMAC key is required (set it, and "
                    f"{ENV_PREVIOUS} during a key rotation)"
                )
            return cls.ephemeral()
        prev = env.get(ENV_PREVIOUS) or None
        return cls(_decode(cur), _decode(prev) if prev else None)

    @classmethod
    def ephemeral(cls) -> "KeyRing":
        """A random per-process key (embedded runner): consistent within this run only."""
        return cls(secrets.token_bytes(32), None, ephemeral_key=True)

    def digest(self, message: str, key: bytes | None = None) -> str:
        return hmac.new(key or self.current, message.encode("utf-8"), hashlib.sha256).hexdigest()

    def digests(self, message: str) -> list[str]:
        """Current-key digest first, then the previous key's (lookup order during a rotation)."""
        out = [self.digest(message)]
        if self.previous:
            out.append(self.digest(message, self.previous))
        return out

    def verify(self, message: str, digest: str) -> bool:
        return any(hmac.compare_digest(d[: len(digest)], digest) for d in self.digests(message))
