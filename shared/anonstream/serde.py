"""Serialization of records with orjson (numpy arrays serialize natively)."""
from __future__ import annotations

from typing import Any

import orjson

_OPTIONS = orjson.OPT_SERIALIZE_NUMPY


def dumps(obj: Any) -> bytes:
    return orjson.dumps(obj, option=_OPTIONS)


def loads(data: bytes | str) -> Any:
    return orjson.loads(data)
