"""The generalizer contract: ``Generalizer`` and the registry of named generalizers a release file can use.

A contract below its users: the built-in generalizers (``swap/generalize.py``), the stored value hierarchies
(``hierarchy/generalizer.py``, paper 004) and the t-plausible WordNet generalizer (``plausibility/generalizer.py``,
paper 002) all implement ``Generalizer`` and are registered here by name, as ``module:attribute`` entries imported
when a release first asks for them (so this module imports none of them, and none of them imports another).

* ``Generalizer.generalize(value, category)`` returns the coarser value (never the same string when it can help it;
  callers treat an unchanged value as "could not generalize").
* ``register_generalizer(name, factory)`` makes ``{name: ..., **params}`` usable in a release file.
"""
from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from typing import Any, Callable


class Generalizer(ABC):
    """Maps a value of a category to a coarser one (one step up a hierarchy). A common-noun result carries
    its determiner ("the regional court"); the rewrite drops it after a determiner already in the text."""

    name: str = "generalizer"

    @abstractmethod
    def generalize(self, value: str, category: str, kind: str | None = None, country: str | None = None) -> str:
        """The coarser value for ``value`` of ``category`` (``kind``: the entity's kind, pii/kinds.py;
        ``country``: the ISO alpha-2 code of the country it belongs to, ``EntitySpan.country``, when known)."""

    def generalize_together(self, values: list[str], category: str, kind: str | None = None,
                            country: str | None = None) -> list[str]:
        """The coarser values for ``values`` of one kind read in one sentence (text order); by default each on its
        own, a generalizer whose values are compared (figures) keeps what relates them."""
        return [self.generalize(v, category, kind, country) for v in values]

    def part_of_phrase(self, before: str, value: str = "") -> bool:
        """Whether ``value``, which the text ``before`` it runs into, belongs to a larger phrase the tagger did not
        take whole, so that generalizing it alone would break the phrase or its meaning; by default never."""
        return False

    def in_context_together(self, befores: list[str], values: list[str], outs: list[str],
                            afters: list[str]) -> list[str]:
        """``in_context`` for the values of one sentence (text order; ``outs`` from ``generalize_together``); a
        generalizer whose values are said from one another overrides it."""
        return [self.in_context(b, v, o, a) for b, v, o, a in zip(befores, values, outs, afters)]

    def in_context(self, before: str, value: str, generalized: str, after: str = "") -> str:
        """What replaces ``value`` given the text ``before`` and ``after`` it: ``value`` itself inside a phrase
        (``part_of_phrase``), otherwise ``generalized`` (what ``generalize_together`` gave); a generalizer whose
        truth depends on the words around the value ("after [2016]") overrides it."""
        return value if self.part_of_phrase(before, value) else generalized


_REGISTRY: dict[str, Callable[..., Generalizer] | str] = {
    "label": "anonstream.swap.generalize:LabelGeneralizer",
    "date": "anonstream.swap.generalize:DateGeneralizer",
    "place": "anonstream.swap.generalize:PlaceGeneralizer",
    "kind": "anonstream.swap.generalize:KindGeneralizer",
    "range": "anonstream.swap.generalize:RangeGeneralizer",
    "demographic": "anonstream.swap.generalize:DemographicGeneralizer",
    "phrase": "anonstream.swap.generalize:PhraseGeneralizer",
    "hierarchy": "anonstream.hierarchy.generalizer:HierarchyGeneralizer",  # paper 004, a stored hierarchy
    "wordnet": "anonstream.plausibility.generalizer:WordNetGeneralizer",  # paper 002, t-plausible hypernyms
}


def register_generalizer(name: str, factory: Callable[..., Generalizer]) -> None:
    """Make ``{name: <name>, **params}`` usable as a category's ``generalizer`` in release files."""
    _REGISTRY[name] = factory


def _factory(name: str) -> Callable[..., Generalizer]:
    entry = _REGISTRY[name]
    if isinstance(entry, str):
        module, _, attribute = entry.partition(":")
        entry = _REGISTRY[name] = getattr(importlib.import_module(module), attribute)
    return entry


def build_generalizer(spec: dict[str, Any] | None) -> Generalizer:
    """A generalizer from its release spec ``{"name": ..., **params}`` (default: label)."""
    spec = dict(spec or {"name": "label"})
    name = spec.pop("name")
    if name not in _REGISTRY:
        raise ValueError(f"unknown generalizer {name!r}; known: {', '.join(sorted(_REGISTRY))}")
    return _factory(name)(**spec)


def known_generalizers() -> list[str]:
    return sorted(_REGISTRY)
