"""Deterministic hash samples of chunks: a chunk is in or out by a hash of its key, never by a draw, so a
redelivered chunk is in or out again and every replica and every stage agrees on the same sample."""
from __future__ import annotations

import hashlib


def sample_key(doc_id: str, chunk_index: int) -> str:
    """The key a chunk is sampled by (the same at every stage: no stage versions in it)."""
    return f"{doc_id}|{chunk_index}"


def in_sample(key: str, share: float) -> bool:
    """Whether ``key`` is in the deterministic sample of size ``share`` (a hash of the key, not a draw); samples of
    different shares are nested (a key in the sample of share s is in every larger one)."""
    if share >= 1.0:
        return True
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big") < share * 2.0 ** 64
