"""Operators: what replaces a span the policy masks now (Presidio's anonymizer operators and more).

| name | output | notes |
| --- | --- | --- |
| ``placeholder`` | ``[PERSON]`` | typed placeholder |
| ``indexed`` | ``[PERSON_3]`` | stable index per entity from the ``PseudonymStore`` (consistent across documents and restarts with Redis) |
| ``redact`` | ``""`` | removes the span |
| ``mask`` | ``*****`` | same length, ``mask_char``; ``keep_last`` characters kept (e.g. card numbers) |
| ``hash`` | ``[PERSON_9f2c…]`` | HMAC-SHA256 of the entity key with the current key (``keys.py``); ``hash_length`` hex chars |
| ``keep`` | the original | the span stays, still reported |

The label is the TAB type, or for contact codes the subtype (``[EMAIL_1]``, ``[PHONE_2]``).
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

from .keys import KeyRing


@dataclass
class OperatorContext:
    label: str  # placeholder label (PERSON, EMAIL, ...)
    entity_key: str  # stable key of the entity (type + canonical form)
    namespace: str
    pseudonyms: Any  # PseudonymStore
    keys: KeyRing | None


class Operator(ABC):
    name = "operator"

    @abstractmethod
    def apply(self, text: str, ctx: OperatorContext) -> str: ...


class Placeholder(Operator):
    name = "placeholder"

    def apply(self, text, ctx):
        return f"[{ctx.label}]"


class Indexed(Operator):
    name = "indexed"

    def apply(self, text, ctx):
        return ctx.pseudonyms.surrogate_for(ctx.namespace, ctx.entity_key, ctx.label)


class Redact(Operator):
    name = "redact"

    def apply(self, text, ctx):
        return ""


@dataclass
class Mask(Operator):
    mask_char: str = "*"
    keep_last: int = 0
    name: str = "mask"

    def apply(self, text, ctx):
        keep = min(self.keep_last, len(text))
        return self.mask_char * (len(text) - keep) + (text[len(text) - keep:] if keep else "")


@dataclass
class KeyedHash(Operator):
    hash_length: int = 16
    name: str = "hash"

    def apply(self, text, ctx):
        if ctx.keys is None:
            raise RuntimeError("the hash operator needs a KeyRing (ANONSTREAM_PSEUDONYM_KEY)")
        digest = ctx.keys.digest(f"{ctx.namespace}\x1f{ctx.entity_key}")
        return f"[{ctx.label}_{digest[: self.hash_length]}]"


class Keep(Operator):
    name = "keep"

    def apply(self, text, ctx):
        return text


def make_operator(spec: str | dict[str, Any]) -> Operator:
    if isinstance(spec, str):
        spec = {"name": spec}
    spec = dict(spec)
    name = spec.pop("name")
    cls = {"placeholder": Placeholder, "indexed": Indexed, "redact": Redact, "mask": Mask, "hash": KeyedHash,
           "keep": Keep}.get(name)
    if cls is None:
        raise ValueError(f"unknown operator {name!r}")
    return cls(**spec)
