"""How TAB annotators treat institutions named after a place, by the place's population (the evidence behind
``RulePolicy.large_city_population`` in shared/anonstream/pii/policy.py).

    .venv/bin/python benchmarks/tab_place_stats.py [../shared/data/tab/echr_train_first100.json]

For every gold ORG mention (every annotator) whose text names a court, office, prosecutor, council, commission,
governor, municipality, police, prison or centre, the population of its first word as a city (GeoNames, via
``anonstream.pii.gazetteer.city_population``) is bucketed and the mention's identifier_type counted. Prints one
line per bucket: mentions, and the share marked NO_MASK.
"""
from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "shared"))

from anonstream.pii.gazetteer import city_population  # noqa: E402

INSTITUTION = re.compile(r"Court|Office|Prosecutor|Council|Commission|Governor|Municipality|Police|Prison|Centre")
BUCKETS = ((1_000_000, "≥ 1M"), (300_000, "300k–1M"), (100_000, "100k–300k"), (0, "< 100k"))


def bucket(population: int | None) -> str:
    if population is None:
        return "no city"
    return next(label for floor, label in BUCKETS if population >= floor)


def main(argv: list[str]) -> int:
    path = Path(argv[0]) if argv else ROOT.parent / "shared" / "data" / "tab" / "echr_train_first100.json"
    counts: dict[str, Counter] = {}
    for doc in json.loads(path.read_text()):
        for layer in doc["annotations"].values():
            for m in layer["entity_mentions"]:
                if m["entity_type"] == "ORG" and INSTITUTION.search(m["span_text"]):
                    b = bucket(city_population(m["span_text"].split()[0]))
                    counts.setdefault(b, Counter())[m["identifier_type"]] += 1
    for label in [lab for _, lab in BUCKETS] + ["no city"]:
        c = counts.get(label, Counter())
        n = sum(c.values())
        if n:
            print(f"{label:>10}: {n:4d} mentions, NO_MASK {c['NO_MASK'] / n:.0%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
