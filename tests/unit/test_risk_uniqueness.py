"""Population-uniqueness models (Zayatz 1991, SNB Chen & McNulty 1998, Pitman) and Dankar et al.'s rule."""
from collections import Counter

import numpy as np
import pytest
from scipy.stats import binom, hypergeom, nbinom

from anonstream.risk.pitman import fit_pitman
from anonstream.risk.uniqueness import (dankar_rule, estimate_population_uniqueness, shlosser_classes,
                                        snb_expected_small_classes, snb_fit, snb_uniques, zayatz_conditional,
                                        zayatz_uniques)

SIZES = [1] * 30 + [2] * 10 + [3] * 5 + [7] * 2


def test_zayatz_by_hand():
    # N = 10, n = 4, classes 1, 1, 2: h(1) = C(9,3)/C(10,4) = 0.4, h(2) = 2 C(8,3)/C(10,4) = 8/15;
    # P(unique | sample unique) = (2/3 * 0.4) / (2/3 * 0.4 + 1/3 * 8/15) = 0.6; U = 2 * 0.6 / 0.4 = 3
    assert zayatz_conditional([1, 1, 2], 10) == pytest.approx(0.6, rel=1e-12)
    assert zayatz_uniques([1, 1, 2], 10) == pytest.approx(3.0, rel=1e-12)


@pytest.mark.parametrize("population", [100, 1000, 10**6])
def test_zayatz_matches_the_hypergeometric_formula(population):
    n, counts = sum(SIZES), Counter(SIZES)
    h = {j: hypergeom(population, j, n).pmf(1) for j in counts}
    expected = counts[1] * h[1] / sum(f * h[j] for j, f in counts.items())
    assert zayatz_conditional(SIZES, population) == pytest.approx(expected, rel=1e-9)


def test_zayatz_for_a_huge_population_is_the_limit():
    # pi -> 0: h(j)/h(1) -> j, so P(unique | sample unique) -> f_1 / n
    assert zayatz_conditional(SIZES, 1e20) == pytest.approx(30 / sum(SIZES), rel=1e-12)


def test_snb_moments_match_a_direct_sum_and_the_fit_recovers_them():
    alpha, beta, classes, pi = 2.0, 0.3, 1000.0, 0.2
    F = np.arange(1, 3000)
    p = nbinom(alpha, beta).pmf(F - 1)                # P(F = 1 + x), x ~ NB(alpha, beta)
    e1 = classes * np.sum(p * binom(F, pi).pmf(1))
    e2 = classes * np.sum(p * binom(F, pi).pmf(2))
    assert snb_expected_small_classes(alpha, beta, classes, pi) == pytest.approx((e1, e2), rel=1e-10)
    fit = snb_fit(e1, e2, classes, pi)
    assert fit is not None
    assert (fit.alpha, fit.beta) == pytest.approx((alpha, beta), rel=1e-6)
    assert fit.uniques == pytest.approx(classes * nbinom(alpha, beta).pmf(0), rel=1e-6)


def test_snb_without_classes_of_size_two_has_no_estimate():
    assert snb_uniques([1, 1, 1, 3, 4], 20) is None


def test_shlosser_is_k_when_the_whole_population_is_sampled_and_more_otherwise():
    assert shlosser_classes(SIZES, sum(SIZES)) == len(SIZES)
    # by hand, sizes 1, 1, 2 and pi = 1/2: var1 = 2(.25) + 2(.25)(.75) = .875, var2 = 2(.5)(.5) + .25(1.25) = .8125,
    # var3 = 2(.5) + .25 = 1.25, var4 = 2(.5) + 2(.5)(.5) = 1.5; K_N = 3 + 2 (.875/.8125)(1.25/1.5)^2
    assert shlosser_classes([1, 1, 2], 8) == pytest.approx(3 + 2 * (0.875 / 0.8125) * (1.25 / 1.5) ** 2, rel=1e-12)


def test_dankar_rule():
    both = {"pitman": 10.0, "zayatz": 20.0, "snb": 15.0}
    assert dankar_rule(0.01, both) == "pitman"
    assert dankar_rule(0.01, {**both, "pitman": None}) == "zayatz"
    assert dankar_rule(0.5, both) == "snb"
    assert dankar_rule(0.5, {**both, "snb": 30.0}) == "zayatz"
    assert dankar_rule(0.5, {**both, "snb": None}) == "zayatz"


def test_estimates_agree_with_pitman_and_give_p_hat():
    N = 500.0
    est = estimate_population_uniqueness(SIZES, N)
    assert est.models["pitman"].uniques == pytest.approx(fit_pitman(SIZES).population_uniques(N))
    assert est.models["zayatz"].uniques == pytest.approx(zayatz_uniques(SIZES, N))
    z = est.models["zayatz"]
    assert z.p_hat == pytest.approx(zayatz_conditional(SIZES, N))     # Zayatz's p_hat is its conditional
    assert z.share == pytest.approx(z.uniques / N)
    assert est.dankar == dankar_rule(sum(SIZES) / N, {m: e.uniques for m, e in est.models.items()})
    assert estimate_population_uniqueness([2, 3], 100).dankar is None   # no sample uniques: nothing to choose


def test_cli_uniqueness(tmp_path, capsys):
    import json

    from anonstream.cli import main

    path = tmp_path / "sizes.json"
    path.write_text(json.dumps({"sizes": SIZES}))
    assert main(["risk", "uniqueness", "--sizes", str(path), "--population", "500", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["dankar_model"] == "snb" and out["zayatz"]["p_hat"] == pytest.approx(zayatz_conditional(SIZES, 500))
    assert main(["risk", "uniqueness", "--sizes", str(path), "--population", "10"]) == 2   # N < n
