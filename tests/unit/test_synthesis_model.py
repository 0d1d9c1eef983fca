"""Sequential L1-logit synthesizer, pMSE ratio, calibration and the consistency rule (paper 003 §3-4)."""
from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from anonstream.cli import main
from anonstream.synthesis.calibrate import calibrate, lambda_path, marginal_agreement, synthesize
from anonstream.synthesis.consistency import allowed_levels
from anonstream.synthesis.model import SequentialSynthesizer
from anonstream.synthesis.pmse import null_pmse, pmse_ratio

STATES = {"TX": "rodeo", "CA": "surfing", "NY": "subway"}
FILLER = "policy claim agent premium insurer phone call office letter refund payment service".split()


def corpus(n: int = 120, seed: int = 0) -> tuple[list[str], dict[str, list[str]]]:
    """Texts whose state is given by one cue word; ``tier`` follows the state (no cue of its own)."""
    rng = np.random.default_rng(seed)
    states = rng.choice(list(STATES), size=n, p=[0.5, 0.3, 0.2])
    texts = [" ".join([STATES[s]] + list(rng.choice(FILLER, size=12))) for s in states]
    tier = ["gold" if s == "TX" else "basic" for s in states]
    return texts, {"state": [str(s) for s in states], "tier": tier}


def test_lambda_max_is_where_every_coefficient_vanishes():
    texts, values = corpus()
    synthesizer = SequentialSynthesizer(("state",), 0.5).fit(texts, values)
    model = synthesizer.models[0]
    X = model.scaled(synthesizer.text.transform(texts))      # the first field's design is the text alone
    n = len(texts)

    def nonzero(ratio: float) -> int:
        fit = LogisticRegression(l1_ratio=1.0, C=1.0 / (n * ratio * model.lambda_max), solver="saga",
                                 max_iter=5000, tol=1e-6).fit(X, values["state"])
        return int(np.count_nonzero(fit.coef_))

    assert nonzero(1.05) == 0
    assert nonzero(0.7) > 0


def test_r_one_draws_from_the_marginal_and_small_r_follows_the_text():
    texts, values = corpus()
    marginal = SequentialSynthesizer(("state",), 1.0).fit(texts, values)
    _, probabilities = marginal.sample(texts, np.random.default_rng(0))
    counts = {s: values["state"].count(s) / len(texts) for s in STATES}
    assert np.allclose(probabilities["state"], [counts[level] for level in marginal.models[0].levels])
    run = synthesize(texts, values, ["state"], 1.0, copies=20, projections=2, consistent=False)
    assert run.agreement["state"] == pytest.approx(marginal_agreement(values["state"]), abs=0.05)
    assert run.synthesizer.models[0].nonzero == 0
    small = synthesize(texts, values, ["state"], 0.05, copies=5, projections=2, consistent=False)
    assert small.agreement["state"] >= 0.85
    assert small.synthesizer.models[0].nonzero > 0


def test_later_fields_are_drawn_given_the_synthetic_earlier_ones():
    texts, values = corpus()
    run = synthesize(texts, values, ["state", "tier"], 0.05, copies=3, projections=2, consistent=False)
    assert run.synthesizer.models[1].previous == ("state",)
    for copy in run.copies:
        pairs = [(s, t) for s, t in zip(copy["state"], copy["tier"])]
        coherent = sum((t == "gold") == (s == "TX") for s, t in pairs) / len(pairs)
        assert coherent >= 0.9      # tier follows the *synthetic* state


def test_pmse_ratio_null_expectation_and_overfit_and_underfit():
    assert null_pmse(11, 200, 0.5) == pytest.approx(10 * 0.25 * 0.5 / 200)
    texts, values = corpus()
    X = SequentialSynthesizer(("state",), 1.0).fit(texts, values).text.transform(texts)
    same = pmse_ratio(X, {"state": values["state"]}, [{"state": values["state"]}], projections=3)
    assert same.ratio == pytest.approx(0.0, abs=1e-6)      # the true values again: over-fit, R = 0
    shuffled = list(np.random.default_rng(1).permutation(values["state"]))
    under = pmse_ratio(X, {"state": values["state"]}, [{"state": shuffled}], projections=3)
    assert under.ratio > 1.5                               # the text's information is lost: under-fit


def test_consistency_restricts_draws_to_the_levels_the_text_names():
    texts, values = corpus(60)
    texts = [t + (" the Lone Star state" if s == "TX" else "") for t, s in zip(texts, values["state"])]
    allowed = allowed_levels(texts, {"state": list(STATES)}, {"state": {"TX": ["lone star"]}})
    assert all((a == {"TX"}) == (s == "TX") for a, s in zip(allowed["state"], values["state"]))
    run = synthesize(texts, values, ["state"], 1.0, copies=5, projections=2,
                     surface_forms={"state": {"TX": ["lone star"]}})
    for copy in run.copies:
        assert all(c == "TX" for c, s in zip(copy["state"], values["state"]) if s == "TX")
    assert run.restricted["state"] == values["state"].count("TX")


def test_calibration_picks_the_ratio_closest_to_one():
    texts, values = corpus(80)
    result = calibrate(texts, values, ["state"], lambda_path(4, 1e-2), copies=2, projections=2)
    ratios = [e["pmse_ratio"] for e in result.path]
    assert result.chosen["pmse_ratio"] == min(ratios, key=lambda r: abs(r - 1))
    assert result.path[0]["nonzero_coefficients"]["state"] == 0
    assert result.path[-1]["nonzero_coefficients"]["state"] > 0


def test_cli_synth_writes_documents_and_report(tmp_path, capsys):
    texts, values = corpus(60)
    src = tmp_path / "docs.jsonl"
    src.write_text("".join(json.dumps({"doc_id": f"d{i}", "text": t, "metadata": {"state": s, "tier": v}}) + "\n"
                           for i, (t, s, v) in enumerate(zip(texts, values["state"], values["tier"]))))
    out, report = tmp_path / "out.jsonl", tmp_path / "report.json"
    assert main(["synth", "--input", str(src), "--fields", "state,tier", "--lambda-ratio", "0.05", "--seed", "3",
                 "--out", str(out), "--report", str(report), "--projections", "2", "--copies", "2"]) == 0
    docs = [json.loads(line) for line in out.read_text().splitlines()]
    assert [d["doc_id"] for d in docs] == [f"d{i}" for i in range(60)]
    assert all(d["metadata"]["state"] in STATES and d["metadata"]["synthetic_fields"] == ["state", "tier"] for d in docs)
    r = json.loads(report.read_text())
    assert set(r) >= {"lambda", "lambda_max", "pmse_ratio", "agreement"}
    assert r["lambda"]["state"] == pytest.approx(0.05 * r["lambda_max"]["state"])
    assert r["agreement"]["state"] >= 0.85


def test_cli_calibrate_reports_the_path_and_the_choice(tmp_path):
    texts, values = corpus(60)
    src = tmp_path / "docs.jsonl"
    src.write_text("".join(json.dumps({"doc_id": f"d{i}", "text": t, "metadata": {"state": s}}) + "\n"
                           for i, (t, s) in enumerate(zip(texts, values["state"]))))
    report = tmp_path / "calibration.json"
    assert main(["synth-calibrate", "--input", str(src), "--fields", "state", "--report", str(report),
                 "--points", "3", "--min-ratio", "0.01", "--copies", "2", "--projections", "2"]) == 0
    r = json.loads(report.read_text())
    assert [round(e["lambda_ratio"], 6) for e in r["path"]] == [1.0, 0.1, 0.01]
    assert r["chosen"] in r["path"] and r["overfit_warning"] == (r["chosen"]["pmse_ratio"] < 1)
    missing = tmp_path / "missing.jsonl"
    missing.write_text(json.dumps({"doc_id": "x", "text": "t", "metadata": {}}) + "\n")
    with pytest.raises(SystemExit, match="missing from the metadata of 1 of 1"):
        main(["synth", "--input", str(missing), "--fields", "state", "--lambda-ratio", "1", "--out",
              str(tmp_path / "o.jsonl"), "--report", str(tmp_path / "r.json")])
