"""t-plausibility (paper 002): eq. 1 cost, volumes, LUB + TDGS against the exact solver, Alg. 2, WordNet, CLI."""
from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anonstream.plausibility.cost import cost, plausible
from anonstream.plausibility.graph import HypernymGraph
from anonstream.plausibility.search import exact_search, lub_search, top_down_greedy
from anonstream.plausibility.senses import choose_sense, common_term
from anonstream.pii.wordnet import wordnet_dir
from anonstream.generalization import build_generalizer
from anonstream.swap.generalize import DateGeneralizer

# The paper's Fig. 2 paths as rebuilt by the digest (§2.2): volumes from the term up.
SACRAMENTO = [1, 4, 32]       # Sacramento -> state capital -> capital
MARIJUANA = [1, 2, 6]         # marijuana -> controlled substance -> drug
LUMBAR_PAIN = [1, 2]          # lumbar pain -> pain
LIVER_CANCER = [1, 2]         # liver cancer -> carcinoma
EXAMPLE = [SACRAMENTO, MARIJUANA, LUMBAR_PAIN, LIVER_CANCER]
LOG_T = 5.0                   # t = 32


def brute_force(volumes, log_t, alpha=0.5):
    """Every level vector: the minimum of eq. 1 among the t-plausible ones."""
    best = None
    for levels in itertools.product(*(range(len(p)) for p in volumes)):
        bits = [math.log2(volumes[i][j]) for i, j in enumerate(levels)]
        if plausible(bits, log_t):
            c = cost(bits, log_t, alpha).total
            best = c if best is None else min(best, c)
    return best


def test_example_4_after_errata():
    """Example 4 with the digest's errata (§6.3): 2.34375 (the paper rounds to 2.33), and 0.387 for Fig. 1(c)
    with the global term the paper leaves out (C2 alone is the paper's 0.31)."""
    capital = cost([5, 0, 0, 0], LOG_T)
    assert capital.global_ == 0 and capital.total == pytest.approx(2.34375)
    fig_1c = [2, math.log2(6), 1, 1]
    assert 2 ** sum(fig_1c) == pytest.approx(96)
    assert sum(fig_1c) == pytest.approx(6.585, abs=1e-3)
    c = cost(fig_1c, LOG_T)
    assert c.local == pytest.approx(0.3087, abs=1e-4)
    assert c.global_ == pytest.approx(0.0785, abs=1e-4)
    assert c.total == pytest.approx(0.387, abs=1e-3)


def test_worked_example_search():
    """LUB lands on Fig. 1(c) (state capital, drug, pain, carcinoma); TDGS steps drug down to controlled
    substance: |D| = 32 exactly, C = 0.09375, the exact optimum."""
    lub = lub_search(EXAMPLE, LOG_T)
    assert lub.levels == (1, 2, 1, 1) and lub.cost.total == pytest.approx(0.387, abs=1e-3)
    greedy = top_down_greedy(EXAMPLE, LOG_T)
    assert greedy.levels == (1, 1, 1, 1)
    assert greedy.cost.total == pytest.approx(0.09375)
    assert 2 ** greedy.total_bits == pytest.approx(32)
    assert exact_search(EXAMPLE, LOG_T).cost.total == pytest.approx(0.09375)


def test_cost_by_hand():
    # m = 2, log t = 4, alpha = 0.5: C1 = 0.5/4 * (3 + 2 - 4)^2 = 0.125; C2 = 0.5/2 * (1 + 0) = 0.25
    c = cost([3, 2], 4)
    assert (c.global_, c.local) == (pytest.approx(0.125), pytest.approx(0.25))
    assert cost([3, 2], 4, alpha=1).total == pytest.approx(0.25)  # global only: 1/4 * 1
    assert not plausible([1.5, 2], 4) and plausible([2, 2], 4)


def test_volumes_by_hand():
    # 0 root; 1, 2 under 0; 3, 4 under 1; 5 under 1 and 2 (a DAG); 6 under 5
    g = HypernymGraph.from_parents([(), (0,), (0,), (1,), (1,), (1, 2), (5,)])
    assert [g.volume(n) for n in range(7)] == [7, 5, 3, 1, 1, 2, 1]
    assert g.path(6) == [6, 5, 1, 0]
    assert g.path_volumes(g.path(5)) == [1, 5, 7]  # a term shown as itself has volume 1


def test_infeasible_returns_roots():
    plan = top_down_greedy([[1, 2], [1, 4]], 10)
    assert plan.levels == (1, 1) and not plan.satisfied
    assert exact_search([[1, 2], [1, 4]], 10).levels == (1, 1)


@st.composite
def trees(draw):
    """A random tree of up to 40 nodes (parent of node n among 0..n-1) and 1-4 distinct terms in it."""
    size = draw(st.integers(2, 40))
    parents = [()] + [(draw(st.integers(0, n - 1)),) for n in range(1, size)]
    terms = draw(st.lists(st.integers(1, size - 1), min_size=1, max_size=4, unique=True))
    return HypernymGraph.from_parents(parents), terms


@settings(max_examples=150, deadline=None)
@given(trees(), st.floats(0, 12), st.sampled_from([0.25, 0.5, 0.75]))
def test_greedy_against_exact(tree, log_t, alpha):
    graph, terms = tree
    volumes = [graph.path_volumes(graph.path(t)) for t in terms]
    exact = exact_search(volumes, log_t, alpha)
    lub = lub_search(volumes, log_t, alpha)
    greedy = top_down_greedy(volumes, log_t, alpha)
    optimum = brute_force(volumes, log_t, alpha)
    if optimum is None:  # even the roots fall short: everything at the root
        assert not exact.satisfied and not greedy.satisfied and not lub.satisfied
        return
    assert exact.satisfied and lub.satisfied and greedy.satisfied
    assert exact.cost.total == pytest.approx(optimum)  # the oracle is exact
    assert exact.cost.total <= greedy.cost.total + 1e-9 <= lub.cost.total + 2e-9
    for i, j in enumerate(greedy.levels):  # TDGS stops at a local optimum of its one-step-down moves
        if j:
            down = list(greedy.levels)
            down[i] -= 1
            bits = [math.log2(volumes[k][d]) for k, d in enumerate(down)]
            assert not plausible(bits, log_t) or cost(bits, log_t, alpha).total >= greedy.cost.total - 1e-12


def test_common_term_alg_2():
    # senses 3 and 4 of a term; 3 -> 1 -> 0, 4 -> 2 -> 1 -> 0, 5 -> 2: node 1 lies on both, lower half of 4's path
    g = HypernymGraph.from_parents([(), (0,), (1,), (1,), (2,), (2,)])
    assert common_term(g, [g.path(3), g.path(4)], min_volume=2) == 1
    assert common_term(g, [g.path(3), g.path(4)], min_volume=100) == 0  # none big enough: the root


def test_embedding_sense_choice_and_fallback():
    g = HypernymGraph.from_parents([(), (0,), (0,)], names=["root", "bank.n.01", "bank.n.02"],
                                   lemmas=[("root",), ("bank",), ("bank",)],
                                   glosses=["", "sloping land beside a river", "a financial institution"])
    axes = {"river": [1.0, 0.0], "financial": [0.0, 1.0]}

    def encode(texts):
        rows = [np.array(next((v for k, v in axes.items() if k in t), [0.7071, 0.7071])) for t in texts]
        return np.stack(rows).astype(np.float32)

    assert choose_sense(g, (1, 2), "embedding", "fishing by the river", encode).node == 1
    assert choose_sense(g, (1, 2), "embedding", "a financial loan", encode).node == 2
    ambiguous = choose_sense(g, (1, 2), "embedding", "the bank", encode)
    assert ambiguous.method == "common" and ambiguous.margin == pytest.approx(0)
    assert choose_sense(g, (1, 2), "first").node == 1


@pytest.mark.parametrize("value, quarter, step", [
    ("31 August 2006", "the third quarter of 2006", "August 2006"),
    ("August 2006", "the third quarter of 2006", "the third quarter of 2006"),
    ("the third quarter of 2006", "the third quarter of 2006", "2006"),
    ("Q1 1999", "Q1 1999", "1999"),
    ("2006", "2006", "the 2000s"),
    ("on 5 May", "on the second quarter", "on May"),
])
def test_date_quarter_level(value, quarter, step):
    assert DateGeneralizer("quarter").generalize(value, "Date") == quarter
    assert DateGeneralizer("step", quarter=True).generalize(value, "Date") == step


def test_date_year_level_coarsens_quarters():
    assert DateGeneralizer("year").generalize("in Q3 2006", "Date") == "in 2006"


needs_wordnet = pytest.mark.skipif(wordnet_dir() is None, reason="WordNet (wordnet-base) not installed")


@needs_wordnet
def test_wordnet_graph():
    from anonstream.plausibility.wordnet import load

    nouns = load()
    g = nouns.graph
    assert len(g) == 82115  # WordNet 3.0 noun synsets
    (flu,) = nouns.senses("flu")
    assert g.names[flu] == "influenza.n.01" and nouns.senses("Leukemias") == nouns.senses("leukemia")
    path = g.path(flu)
    assert [g.names[n] for n in path[:3]] == ["influenza.n.01", "respiratory_disease.n.01", "disease.n.01"]
    assert g.names[path[-1]] == "entity.n.01" and g.volume(path[-1]) == len(g)
    volumes = [g.volume(n) for n in path]
    assert volumes == sorted(volumes) and len(set(volumes)) == len(volumes)
    assert g.names[g.path(nouns.senses("Sacramento")[0])[1]] == "state_capital.n.01"  # an @i (instance) hypernym


@needs_wordnet
def test_wordnet_release_generalizer():
    g = build_generalizer({"name": "wordnet", "bits": 6})
    assert g.generalize("teacher", "Demographic", "occupation") == "educator"  # teacher 33 < 64 <= educator 72
    assert g.generalize("secondary school teacher", "Demographic", "occupation") == "educator"
    assert g.generalize("Siemens", "Organization") == "[Organization]"  # a name, not the unit
    assert g.generalize("Turkish armed forces", "Misc") == "[Misc]"  # a name, not force.n.01 ("quality")
    assert g.generalize("qwzxv", "Misc") == "[Misc]"
    chained = build_generalizer({"name": "wordnet", "bits": 6, "otherwise": {"name": "label", "label": "a group"}})
    assert chained.generalize("Danish", "Demographic") == "a group"
    assert chained.generalize("teacher", "Demographic") == "educator"


@needs_wordnet
def test_cli_json_shape(capsys):
    from anonstream.cli import main

    code = main(["generalize-terms", "--terms", "diabetes,leukemia,flu,qwzxv", "--t", "4", "--senses", "first",
                 "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert set(out) >= {"t_requested_bits", "t_achieved_bits", "plausible_texts", "satisfied", "cost", "terms"}
    assert out["t_requested_bits"] == 12 and out["t_achieved_bits"] >= 12 and out["satisfied"]
    assert 2 ** out["t_achieved_bits"] == pytest.approx(out["plausible_texts"], rel=1e-3)
    terms = {t["term"]: t for t in out["terms"]}
    assert terms["flu"]["synset"] == "respiratory_disease.n.01" and terms["flu"]["lemma"] == "respiratory disease"
    assert terms["qwzxv"]["synset"] is None and terms["qwzxv"]["sense_method"] == "unknown"
    assert {"term", "sense", "synset", "lemma", "levels_up", "volume", "bits", "sense_method"} == set(terms["diabetes"])


@needs_wordnet
def test_release_yaml_enables_wordnet(tmp_path):
    """The release snippet of docs/concepts.md (t-plausible generalization): Demographic generalized t-plausibly, the other categories as the default."""
    import copy

    import yaml

    from anonstream.swap.release import DEFAULT_RELEASE, Release

    obj = copy.deepcopy(DEFAULT_RELEASE)
    obj["categories"]["Demographic"] = {"status": "G", "generalizer": {"name": "wordnet", "bits": 6}}
    path = tmp_path / "release.yaml"
    path.write_text(yaml.safe_dump(obj))
    release = Release.from_yaml(path)
    assert release.status("Demographic") == "G"
    assert release.generalizer("Demographic").generalize("teacher", "Demographic", "occupation") == "educator"
    with pytest.raises(Exception, match="senses"):
        Release.from_dict({**obj, "categories": {**obj["categories"], "Misc": {
            "status": "G", "generalizer": {"name": "wordnet", "senses": "psychic"}}}})


@needs_wordnet
def test_min_term_bits_floor():
    """Paper 002's sentence on real WordNet at t = 32 (1.25 bits/term): uniform t-PAT leaves Sacramento as it is
    (state capital would cost (5.83 − 1.25)² in eq. 1's local term); the per-term floor generalizes it."""
    from anonstream.plausibility.generalizer import generalize_terms

    terms = ["Sacramento", "marijuana", "lumbar pain", "liver cancer"]
    plain = generalize_terms(terms, 1.25)
    assert plain.satisfied and plain.requested_bits == 5
    assert plain.terms[0].synset is None and plain.terms[0].bits == 0
    floored = generalize_terms(terms, 1.25, min_term_bits=1.25)
    assert floored.satisfied and all(t.bits >= 1.25 for t in floored.terms)
    assert floored.terms[0].synset == "state_capital.n.01"
    assert floored.cost.total > plain.cost.total  # the floor costs eq. 1 uniformity, never t
