"""t-plausible WordNet generalization (paper 002, issue 11 items 2 and 6).

Terms: the DEM and MISC gold mentions of TAB (``../shared/data/tab/echr_train_first100.json``) and of the Wikipedia
biographies (``../shared/data/wikibio/wiki_test.json``), every annotator, that WordNet 3.0 knows as common nouns
(written in lower case, one or more words), plus a fixed list of medical terms.
For groups of m terms and t = 2^(bits·m):

1. t achieved vs requested, and the information kept: hypernym steps taken, depth of the shown synset against
   the term's (depth = steps below ``entity.n.01`` on the chosen path), and specificity 1 − log2 volume / log2 N
   (N = 82,115 noun synsets: 1 = the term itself, 0 = ``entity``);
2. greedy (LUB + TDGS, Alg. 4 + 6) against LUB alone and the exact solver (Alg. 3): cost of eq. 1 (excess over the
   optimum, share of groups at the optimum) and time, side by side on the same groups;
3. the release's ``wordnet`` generalizer (one value at a time) on the DEM values: share generalized.

Results: counts, bits, costs and WordNet synset names of the medical list only; never TAB text.

    .venv/bin/python benchmarks/bench_plausibility.py [--quick]
"""
from __future__ import annotations

import json
import math
import random
import statistics

import common

from anonstream.plausibility import wordnet
from anonstream.plausibility.search import exact_search, lub_search, top_down_greedy
from anonstream.generalization import build_generalizer

CORPORA = {"TAB": common.REPO.parent / "shared" / "data" / "tab" / "echr_train_first100.json",
           "Wikipedia": common.REPO.parent / "shared" / "data" / "wikibio" / "wiki_test.json"}
MEDICAL = ["diabetes", "leukemia", "flu", "asthma", "hepatitis", "tuberculosis", "migraine", "pneumonia",
           "arthritis", "epilepsy", "measles", "malaria"]
BITS = (2, 4, 6, 8)
ROUNDS = 3  # timing rounds of section 2 (median)


def gold_terms(nouns: wordnet.WordNetNouns, corpus: str) -> dict[str, list[str]]:
    """Distinct lower-case DEM / MISC gold mentions WordNet knows as nouns, per entity type."""
    out: dict[str, set[str]] = {"DEM": set(), "MISC": set()}
    for doc in json.loads(CORPORA[corpus].read_text()):
        for annotator in doc["annotations"].values():
            for mention in annotator["entity_mentions"]:
                text = " ".join(mention["span_text"].split())
                if mention["entity_type"] in out and text[:1].islower() and nouns.senses(text):
                    out[mention["entity_type"]].add(text)
    return {k: sorted(v) for k, v in out.items()}


def kept(nouns: wordnet.WordNetNouns, term: str, level: int) -> tuple[float, float, float]:
    """(depth of the term, depth of what is shown, specificity of what is shown) on the term's first sense."""
    g = nouns.graph
    path = g.path(nouns.senses(term)[0])
    volume = g.path_volumes(path)[level]
    return len(path) - 1, len(path) - 1 - level, 1 - math.log2(volume) / math.log2(len(g))


def groups(terms: list[str], m: int, count: int, seed: int) -> list[list[str]]:
    rng = random.Random(seed)
    return [rng.sample(terms, m) for _ in range(count)] if len(terms) >= m else []


def volumes_of(nouns: wordnet.WordNetNouns, group: list[str]) -> list[list[int]]:
    g = nouns.graph
    return [g.path_volumes(g.path(nouns.senses(t)[0])) for t in group]


def section_t(results: common.Results, nouns, terms: list[str], m: int, count: int) -> None:
    from anonstream.plausibility.generalizer import generalize_terms

    rows = []
    for bits, floor in [(b, f) for b in BITS for f in (0, b)]:
        achieved, excess, satisfied, steps, depth, depth0, spec, unchanged = [], [], 0, [], [], [], [], 0
        for group in groups(terms, m, count, seed=bits):
            result = generalize_terms(group, bits, min_term_bits=floor, nouns=nouns)
            achieved.append(result.achieved_bits / m)
            excess.append((result.achieved_bits - bits * m) / m)
            satisfied += result.satisfied
            for term, level in zip(group, (t.levels_up for t in result.terms)):
                d0, d, s = kept(nouns, term, level)
                steps.append(level)
                depth0.append(d0)
                depth.append(d)
                spec.append(s)
                unchanged += level == 0
        n = len(achieved)
        rows.append([bits, floor or "–", n, f"{statistics.mean(achieved):.2f}", f"{max(excess):.2f}", f"{satisfied}/{n}",
                     f"{statistics.mean(steps):.2f}", f"{statistics.mean(depth0):.1f} → {statistics.mean(depth):.1f}",
                     f"{statistics.mean(spec):.3f}", f"{unchanged / len(steps):.1%}"])
    results.section(f"1. t requested vs achieved — DEM + MISC nouns, groups of m = {m} (LUB + TDGS)", common.table(
        ["bits/term requested", "floor per term (min_term_bits)", "groups", "bits/term achieved (mean)", "max excess bits/term", "t reached",
         "hypernym steps (mean)", "depth term → shown", "specificity kept", "terms left as they are"], rows)
        + "\n\nSpecificity 1 − log2 volume / log2 82,115 (1: the term itself). Uniform t-PAT may leave a term "
          "unchanged when the others carry its share (eq. 1's local term only penalizes it): privacy of the set, not "
          "of each term. The floor (`--min-term-bits`) closes that at a cost in specificity; the release's "
          "generalizer works one value at a time, so there every value reaches 2^bits itself.")


def section_solvers(results: common.Results, nouns, terms: list[str], sizes: tuple[int, ...], count: int) -> None:
    rows = []
    for m in sizes:
        for bits in (4, 8):
            problems = [volumes_of(nouns, g) for g in groups(terms, m, count, seed=100 + m + bits)]
            plans = {"exact": [], "lub": [], "greedy": []}
            steps = {name: [(lambda p=p, f=f, name=name: plans[name].append(f(p, bits * m))) for p in problems]
                     for name, f in (("exact", exact_search), ("lub", lub_search), ("greedy", top_down_greedy))}
            rounds = common.interleaved_steps(steps, rounds=ROUNDS)
            wall = {name: common.median([r[name].wall for r in rounds]) for name in steps}
            plans = {name: found[:len(problems)] for name, found in plans.items()}
            opt = [p.cost.total for p in plans["exact"]]
            gap = [g.cost.total - o for g, o in zip(plans["greedy"], opt)]
            lub_gap = [g.cost.total - o for g, o in zip(plans["lub"], opt)]
            at_opt = sum(x < 1e-9 for x in gap)
            rows.append([m, bits, len(problems), f"{statistics.mean(opt):.4f}",
                         f"{statistics.mean(gap):.4f} (max {max(gap):.4f})", f"{at_opt}/{len(problems)}",
                         f"{statistics.mean(lub_gap):.4f} (max {max(lub_gap):.4f})",
                         f"{1000 * wall['greedy'] / len(problems):.2f}",
                         f"{1000 * wall['exact'] / len(problems):.2f}",
                         f"{wall['exact'] / max(wall['greedy'], 1e-9):.1f}×"])
    results.section("2. Greedy (LUB + TDGS) vs exact (Alg. 3) on small cases — same groups, run side by side",
                    common.table(["m", "bits/term", "groups", "optimal C (mean)", "TDGS − optimum: mean (max)",
                                  "TDGS at optimum", "LUB alone − optimum: mean (max)", "TDGS ms/group",
                                  "exact ms/group", "exact / TDGS time"], rows)
                    + f"\n\nTimes: median of {ROUNDS} interleaved rounds (``common.interleaved_steps``), wall clock, "
                      "paths and volumes computed beforehand."
                    + "\n\nPaper 002 §5.4 (Fig. 6d-g): TDGS \"almost as good as the optimal solution\"; Theorem 2 bounds "
                      "LUB's excess by σ² = 9.")


def section_medical(results: common.Results, nouns) -> None:
    from anonstream.plausibility.generalizer import generalize_terms

    rows = []
    for bits in (4, 8):
        r = generalize_terms(MEDICAL, bits, nouns=nouns)
        rows.append([bits, f"{r.requested_bits:.0f}", f"{r.achieved_bits:.2f}", f"{r.cost.total:.3f}",
                     ", ".join(f"{t.term} → {t.synset or 'itself'}" for t in r.terms)])
    results.section(f"Medical terms (m = {len(MEDICAL)}, first senses, LUB + TDGS)", common.table(
        ["bits/term", "log2 t", "achieved bits", "C (eq. 1)", "generalizations"], rows))


def section_release(results: common.Results, dem: list[str]) -> None:
    rows = []
    for bits in (4, 6, 8):
        g = build_generalizer({"name": "wordnet", "bits": bits})
        outputs = [g.generalize(v, "Demographic", "occupation") for v in dem]
        generalized = [o for o in outputs if not o.startswith("[")]
        rows.append([bits, len(dem), f"{len(generalized) / len(dem):.1%}", len(set(generalized))])
    results.section("3. Release generalizer `wordnet` on the DEM nouns (one value at a time, first sense)",
                    common.table(["bits", "values", "generalized (rest: [Demographic])", "distinct outputs"], rows))


def main() -> None:
    args = common.arg_parser(__doc__).parse_args()
    results = common.Results("plausibility", "t-plausible WordNet generalization (paper 002)", quick=args.quick)
    for key, value in common.machine_info().items():
        common.log(f"{key}: {value}")
    with common.timed() as load:
        nouns = wordnet.load()
    found = {corpus: gold_terms(nouns, corpus) for corpus in CORPORA}
    terms = sorted({t for f in found.values() for kind in ("DEM", "MISC") for t in f[kind]})
    dem = sorted({t for f in found.values() for t in f["DEM"]})
    counts = "; ".join(f"{corpus}: {len(f['DEM'])} DEM, {len(f['MISC'])} MISC" for corpus, f in found.items())
    results.add(f"WordNet 3.0 nouns: {len(nouns.graph):,} synsets, read in {load.wall:.1f} s. Distinct gold mentions "
                f"(all annotators) written in lower case that WordNet knows as nouns — {counts}; {len(terms)} terms "
                "in all. Volume = distinct noun synsets in the hyponym closure (graph.py); paths = shortest hypernym "
                "chain; α = 0.5; first senses.")
    count = 5 if args.quick else 40
    section_t(results, nouns, terms, m=10, count=count)
    section_solvers(results, nouns, terms, sizes=(3, 5) if args.quick else (3, 5, 8), count=count)
    section_medical(results, nouns)
    section_release(results, dem)
    results.write()


if __name__ == "__main__":
    main()
