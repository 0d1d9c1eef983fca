"""Release configuration of the swap stage: the paper's decision variables R = (r, NEC_1..NEC_p, C)
(paper 000, §2.3, eq. 2.4), plus what the streaming version needs (rare threshold, pool bounds,
fallback) and the superpopulation size N of the risk audit (§2.4.3, eq. 2.14).

A release file is YAML validated against ``schemas/release.v1.json``; ``Release.version`` is a hash
of its normalized content (defaults filled in, category mapping version included), so two files that
mean the same release have the same version, and every output record echoes it (``to_echo``).

Category statuses (§2.3): **S** swapped between paired chunks, **F** must stay fixed, **C** must
change (replaced by the category placeholder, e.g. ``[Event]``), **U** neither (left as it is),
**G** generalized (replaced by a coarser value through the category's pluggable generalizer; e.g.
dates to month/year). Constraints C of the paper (different documents, same cluster, and here: the
same kind of thing) are built into the pairing (``pairing.py``), not configured.

Two choices the paper does not have, because it has no masking decision (paper 001 gives one):
``scope`` — ``masked`` (default): only entities the pii stage decided to mask are touched, NO_MASK ones
stay as written; ``all``: every detected entity, as in the paper. ``protect`` — ``all`` (default): every
chunk with masked values leaves changed (swapped, or the fallback when no partner of its kind comes in
time); ``rare``: only chunks whose tuple is rare get the fallback, the others may leave as they are
(the paper's behaviour, with the stream's rare-first protection); ``none``: the paper as written, a chunk is
offered for swapping with probability ``swap_rate`` whether rare or not, and what finds no partner stays (so DR,
eq. 2.16, moves with r: the release planner's candidates). ``unknown_kinds`` — ``generalize`` (default): a
value the pii stage could give no finer kind than its type (``pii.kinds.UNKNOWN_KINDS``: "organization",
"place", "group", "misc") has no partner that is known to be the same sort of thing, so it is generalized like a
G category instead of swapped (a statute's foreign title is not swapped for a person's name that the tagger
typed ORG); ``swap``: such values swap among themselves, as every value does in the paper.
``generalized_kinds`` — kinds that are generalized even though partners of their kind exist. The default
release lists the institutions a place names, court, prosecutor, prison and police: what identifies "the Białystok
District Court" is the place alone, and "the district court" drops exactly that and stays true, where a swap
("the Pruszków District Court") asserts another court that had nothing to do with the case; and it lists the
offices people hold (``position``): "the Mayor of the Dominowo Commune" becomes "the mayor", where a swap had
made him "the lawyer of the organisation", and the roles people hold in a business ("CFO" → "executive", never
"investor" → "Chief Executive Officer"); a financial measure ("EBITDA" → "the measure": a swap would change what the
figures mean), a fiscal period the tagger typed as a name ("Q4" → "the period") and a person's name the tagger typed
as an organisation ("the person": a swap would move another document's name here). Empty (the paper's behaviour)
when the release does not say.

Category mapping (detector output → release category). The OntoNotes label (``EntitySpan.subtype``,
kept by the pii stage's spaCy recognizer, see ``pii/ner.py``) decides when it is known; otherwise the
TAB type (``EntitySpan.type``) does:

| category     | OntoNotes subtype                    | TAB type (no/unknown subtype) | paper §3.1.4 |
| ------------ | ------------------------------------ | ----------------------------- | ------------ |
| Organization | ORG                                  | ORG                           | yes          |
| Person       | PERSON                               | PERSON                        | yes          |
| Event        | EVENT                                | –                             | yes          |
| Product      | PRODUCT                              | –                             | yes          |
| Location     | GPE, LOC, FAC                        | LOC                           | yes          |
| Date         | DATE, TIME, DURATION                 | DATETIME                      | yes          |
| Demographic  | NORP, LANGUAGE, OCCUPATION           | DEM                           | no (extra)   |
| Quantity     | MONEY, PERCENT, QUANTITY, CARDINAL, ORDINAL | QUANTITY               | no (extra)   |
| Code         | EMAIL, URL, PHONE, IBAN, CARD, IP, CASE | CODE                       | no (extra)   |
| Misc         | WORK_OF_ART, LAW                     | MISC                          | no (extra)   |

The four extra categories make every detected entity part of the chunk tuple (they default to U and
then only count towards the validity of a swap, §2.1).
"""
from __future__ import annotations

import copy
import hashlib
import importlib.resources
import json
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from ..commonness import CommonRule
from ..pii.kinds import UNKNOWN_KINDS
from ..records import EntitySpan
from ..generalization import Generalizer, build_generalizer

SCHEMA_NAME = "release.v1"
MAPPING_VERSION = "1"
PAPER_CATEGORIES = ("Organization", "Person", "Event", "Product", "Location", "Date")
CATEGORIES = PAPER_CATEGORIES + ("Demographic", "Quantity", "Code", "Misc")
STATUSES = ("S", "F", "C", "U", "G")

SUBTYPE_TO_CATEGORY: dict[str, str] = {
    "ORG": "Organization",
    "PERSON": "Person",
    "EVENT": "Event",
    "PRODUCT": "Product",
    "GPE": "Location", "LOC": "Location", "FAC": "Location",
    "DATE": "Date", "TIME": "Date", "DURATION": "Date",
    "NORP": "Demographic", "LANGUAGE": "Demographic", "OCCUPATION": "Demographic",
    "MONEY": "Quantity", "PERCENT": "Quantity", "QUANTITY": "Quantity", "CARDINAL": "Quantity",
    "ORDINAL": "Quantity",
    "EMAIL": "Code", "URL": "Code", "PHONE": "Code", "IBAN": "Code", "CARD": "Code", "IP": "Code",
    "CASE": "Code",
    "WORK_OF_ART": "Misc", "LAW": "Misc",
}
TYPE_TO_CATEGORY: dict[str, str] = {
    "ORG": "Organization",
    "PERSON": "Person",
    "LOC": "Location",
    "DATETIME": "Date",
    "DEM": "Demographic",
    "QUANTITY": "Quantity",
    "CODE": "Code",
    "MISC": "Misc",
}


def category_of(entity: EntitySpan) -> str:
    """The release category of a detected entity (table in the module docstring)."""
    if entity.subtype:
        found = SUBTYPE_TO_CATEGORY.get(entity.subtype.upper())
        if found:
            return found
    return TYPE_TO_CATEGORY.get(entity.type, "Misc")


# The default release, also shipped as deploy/release.default.yaml (a test keeps them equal).
DEFAULT_RELEASE: dict[str, Any] = {
    "schema": "release.v1",
    "name": "default",
    "description": (
        "Only what the pii stage decided to mask changes (scope: masked); NO_MASK entities such as "
        "\"the Court of Cassation\" stay as written. Organization, Product, Location and Demographic "
        "values are swapped between similar chunks of different documents, each only with a value of "
        "its own kind (a court for a court, a city for a city, a nationality for a nationality); every "
        "chunk is protected (protect: all), so a value that finds no partner of its kind in time is "
        "generalized instead: an organisation to its kind (\"the regional court\"), a place to its "
        "country (a country to its continent), a nationality to its continent, an occupation to its "
        "WordNet hypernym. Person and Code are U because the pii stage already replaced them by "
        "document-consistent pseudonyms. Event and Misc are generalized to the common noun they are "
        "built on (\"the earthquake\"), Date one step up (day to month, month to year, year to decade: "
        "keeps the timeline, drops the precision that links a text to a known event), "
        "Quantity to a band (\"EUR 5,000-10,000\", ages by decade, small counts to "
        "\"several\")."
    ),
    "scope": "masked",
    "protect": "all",
    "unknown_kinds": "generalize",
    "generalized_kinds": ["court", "prosecutor", "prison", "police", "position", "occupation", "measure", "period",
                          "person"],
    "identity_field": None,
    "common_k": 40,
    "common_share": 0.035,
    "categories": {
        "Organization": {"status": "S", "generalizer": {"name": "kind"}},
        "Person": {"status": "U"},
        "Event": {"status": "G", "generalizer": {"name": "phrase"}},
        "Product": {"status": "S", "generalizer": {"name": "phrase"}},
        "Location": {"status": "S", "generalizer": {"name": "place", "level": "country"}},
        "Date": {"status": "G", "generalizer": {"name": "date", "level": "step"}},
        "Demographic": {"status": "S", "generalizer": {"name": "demographic"}},
        "Quantity": {"status": "G", "generalizer": {"name": "range"}},
        "Code": {"status": "U"},
        "Misc": {"status": "G", "generalizer": {"name": "phrase"}},
    },
    "swap_rate": 1.0,
    "rare_k": 2,
    "donors": True,
    "fallback": "generalize",
    "pool": {"max_size": 64, "max_wait_seconds": 30, "ttl_seconds": 86400},
    "superpopulation_size": 1.0e20,
    "join_separator": " & ",
}

_DEFAULTS = {
    "description": "",
    "identity_field": None,
    "common_k": None,
    "common_share": 0.0,
    "scope": "masked",
    "protect": "all",
    "unknown_kinds": "generalize",
    "generalized_kinds": [],
    "rare_k": 2,
    "donors": True,
    "fallback": "generalize",
    "pool": {"max_size": 64, "max_wait_seconds": 30.0, "ttl_seconds": 86400},
    "superpopulation_size": 1.0e20,
    "join_separator": " & ",
}


class ReleaseInvalid(ValueError):
    """The release file does not satisfy schemas/release.v1.json (message names places, not values)."""


@lru_cache(maxsize=1)
def _validator() -> Draft202012Validator:
    try:
        text = importlib.resources.files("anonstream.schemas").joinpath("release.v1.json").read_text()
    except (ModuleNotFoundError, FileNotFoundError):  # source tree without the installed package map
        text = (Path(__file__).resolve().parents[3] / "schemas" / "release.v1.json").read_text()
    return Draft202012Validator(json.loads(text))


@dataclass(frozen=True, slots=True)
class CategoryRule:
    status: str
    placeholder: str
    generalizer: dict[str, Any]


@dataclass(frozen=True, slots=True)
class PoolBounds:
    max_size: int
    max_wait_seconds: float
    ttl_seconds: int


class Release:
    """A validated release. Build with ``from_yaml``, ``from_dict`` or ``default``."""

    def __init__(self, normalized: dict[str, Any]):
        self._data = normalized
        self.name: str = normalized["name"]
        self.description: str = normalized["description"]
        self.swap_rate: float = float(normalized["swap_rate"])
        self.rare_k: int = int(normalized["rare_k"])
        self.donors: bool = bool(normalized["donors"])
        self.fallback: str = normalized["fallback"]
        self.scope: str = normalized["scope"]
        self.protect: str = normalized["protect"]
        self.unknown_kinds: str = normalized["unknown_kinds"]
        self.generalized_kinds: frozenset[str] = frozenset(normalized["generalized_kinds"])
        self.superpopulation_size: float = float(normalized["superpopulation_size"])
        self.identity_field: str | None = normalized["identity_field"]
        self.common = CommonRule(normalized["common_k"], float(normalized["common_share"]))
        self.join_separator: str = normalized["join_separator"]
        pool = normalized["pool"]
        self.pool = PoolBounds(int(pool["max_size"]), float(pool["max_wait_seconds"]), int(pool["ttl_seconds"]))
        self.categories: dict[str, CategoryRule] = {
            name: CategoryRule(rule["status"], rule["placeholder"], rule["generalizer"])
            for name, rule in normalized["categories"].items()
        }
        self._generalizers: dict[str, Generalizer] = {
            name: build_generalizer(rule.generalizer) for name, rule in self.categories.items()
        }

    # -- construction ---------------------------------------------------------------------------
    @classmethod
    def from_dict(cls, obj: dict[str, Any]) -> "Release":
        errors = sorted(_validator().iter_errors(obj), key=lambda e: list(e.absolute_path))
        if errors:
            where = "; ".join(
                "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in e.absolute_path)
                + f": {e.validator}" for e in errors[:5])
            raise ReleaseInvalid(f"release does not satisfy {SCHEMA_NAME}: {where}")
        try:
            return cls(_normalize(obj))
        except (TypeError, ValueError) as exc:  # a generalizer that rejects its parameters
            raise ReleaseInvalid(f"release generalizer: {type(exc).__name__}: {exc}") from None

    @classmethod
    def from_yaml(cls, path: str | Path) -> "Release":
        import yaml

        with open(path, encoding="utf-8") as handle:
            obj = yaml.safe_load(handle)
        if not isinstance(obj, dict):
            raise ReleaseInvalid(f"release file {path} does not hold a mapping")
        return cls.from_dict(obj)

    @classmethod
    def default(cls) -> "Release":
        return cls.from_dict(copy.deepcopy(DEFAULT_RELEASE))

    # -- identity -------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The normalized release (defaults filled in)."""
        return copy.deepcopy(self._data)

    @cached_property
    def version(self) -> str:
        """Content hash of the normalized release and the category mapping version."""
        canonical = json.dumps({"release": self._data, "mapping": MAPPING_VERSION}, sort_keys=True,
                               separators=(",", ":"), ensure_ascii=True)
        return hashlib.sha256(canonical.encode()).hexdigest()[:16]

    def to_echo(self) -> dict[str, Any]:
        """The small dict put on every output record (``Chunk.release``)."""
        return {"schema": SCHEMA_NAME, "name": self.name, "version": self.version}

    @cached_property
    def counts_scope(self) -> str:
        """Namespace of the running tuple counts: they depend only on which categories are swapped
        (the marginal table z_J of §2.4.3) and on the mapping, not on the rest of the release."""
        canonical = json.dumps({"J": list(self.swapped), "mapping": MAPPING_VERSION}, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()[:12]

    def swaps_slot(self, slot: str) -> bool:
        """Whether values of this slot (a kind) may be swapped: not when the kind is unknown and
        ``unknown_kinds`` is ``generalize``, nor when the release generalizes that kind (``generalized_kinds``)."""
        return (self.unknown_kinds == "swap" or slot not in UNKNOWN_KINDS) and slot not in self.generalized_kinds

    # -- per category ---------------------------------------------------------------------------
    def status(self, category: str) -> str:
        return self.categories[category].status

    @cached_property
    def swapped(self) -> tuple[str, ...]:
        """J: the S categories, in category order."""
        return tuple(c for c in CATEGORIES if self.categories[c].status == "S")

    @cached_property
    def unswapped(self) -> tuple[str, ...]:
        return tuple(c for c in CATEGORIES if self.categories[c].status != "S")

    def placeholder(self, category: str) -> str:
        return self.categories[category].placeholder

    def generalizer(self, category: str) -> Generalizer:
        return self._generalizers[category]

    def __repr__(self) -> str:
        statuses = ",".join(f"{c}={self.categories[c].status}" for c in CATEGORIES)
        return f"Release({self.name!r}, version={self.version}, r={self.swap_rate}, {statuses})"


def _normalize(obj: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"schema": obj["schema"], "name": obj["name"], "swap_rate": float(obj["swap_rate"])}
    for key, default in _DEFAULTS.items():
        if key == "pool":
            out["pool"] = {**default, **(obj.get("pool") or {})}
            out["pool"]["max_wait_seconds"] = float(out["pool"]["max_wait_seconds"])
        else:
            out[key] = obj.get(key, default)
    out["superpopulation_size"] = float(out["superpopulation_size"])
    categories: dict[str, Any] = {}
    given = obj["categories"]
    for name in CATEGORIES:
        rule = dict(given.get(name) or {"status": "U"})
        default_generalizer = {"name": "date", "level": "month"} if name == "Date" else {"name": "label"}
        categories[name] = {
            "status": rule["status"],
            "placeholder": rule.get("placeholder", f"[{name}]"),
            "generalizer": dict(rule.get("generalizer") or default_generalizer),
        }
    out["categories"] = categories
    return out
