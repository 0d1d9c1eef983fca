"""swap: named-entity swapping between similar chunks of different documents (paper 000).

Pure core (no Kafka, no Redis): ``release`` (decision variables, eq. 2.4), ``tuples`` (chunk entity
tuples, §3.1.4), ``rewrite`` (values replaced in text with offsets), ``generalize`` (pluggable G
operators), ``pairing`` (the streaming processor: pools per cluster, rare-first pairing, fallback),
``batch`` (the paper's sequential procedure on a whole corpus), ``stores`` (interfaces and in-memory
implementations; Redis ones in ``anonstream.stores.redis_swap``).
"""
from __future__ import annotations

from ..generalization import Generalizer, register_generalizer
from .generalize import DateGeneralizer, LabelGeneralizer
from .pairing import SwapOutput, SwapProcessor, pool_of
from .release import CATEGORIES, Release, ReleaseInvalid, category_of
from .stores import InMemoryPoolStore, InMemoryTupleCounts, PoolEntry, PoolStore, TupleCounts
from .tuples import chunk_tuple, tuple_values

__all__ = [
    "CATEGORIES", "DateGeneralizer", "Generalizer", "InMemoryPoolStore", "InMemoryTupleCounts", "LabelGeneralizer",
    "PoolEntry", "PoolStore", "Release", "ReleaseInvalid", "SwapOutput", "SwapProcessor", "TupleCounts",
    "category_of", "chunk_tuple", "pool_of", "register_generalizer", "tuple_values",
]
