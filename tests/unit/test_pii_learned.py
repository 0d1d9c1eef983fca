"""The learned masking decision (shared/anonstream/pii/learned.py): the fit, the threshold, the model file,
the policy and the training labels."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from anonstream.evaluation.tab import GoldMention, TabDocument
from anonstream.pii.grouping import DocumentEntities
from anonstream.pii.learned import (FEATURE_NAMES, DEFAULT_MODEL, LearnedPolicy, LogisticModel, best_threshold,
                                    entity_features, fit_logistic, training_examples)
from anonstream.pii.policies import make_policy
from anonstream.records import EntitySpan


def test_fit_matches_a_generic_optimiser():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(400, 3))
    y = (rng.random(400) < 1 / (1 + np.exp(-(X @ [2.0, -1.0, 0.0] + 0.5)))).astype(float)
    w, b = fit_logistic(X, y, l2=1.0)

    def loss(theta):
        z = X @ theta[:3] + theta[3]
        return np.sum(np.logaddexp(0, z) - y * z) + 0.5 * np.sum(theta[:3] ** 2)

    ref = minimize(loss, np.zeros(4), method="BFGS", options={"gtol": 1e-9}).x
    np.testing.assert_allclose(np.r_[w, b], ref, atol=1e-4)
    assert w[0] > 1.2 and w[1] < -0.6 and abs(w[2]) < 0.3  # the signs and sizes of the generating weights


def test_best_threshold_weighs_recall_with_beta():
    p = np.array([0.9, 0.8, 0.6, 0.4, 0.3, 0.1])
    y = np.array([1, 1, 0, 1, 0, 0])
    assert best_threshold(p, y, beta=1.0) == pytest.approx(0.4)  # F1: 3 of 3 found, 1 wrong -> 0.857
    assert best_threshold(p, y, beta=0.3) == pytest.approx(0.8)  # precision first: only the sure ones


def test_model_json_roundtrip_and_feature_check(tmp_path):
    model = LogisticModel(np.arange(len(FEATURE_NAMES), dtype=float) / 100, -0.5, 0.4, "unit test")
    model.save(tmp_path / "m.json")
    again = LogisticModel.load(tmp_path / "m.json")
    assert again.threshold == 0.4 and again.trained_on == "unit test"
    np.testing.assert_allclose(again.weights, model.weights)
    bad = model.to_json()
    bad["feature_names"] = bad["feature_names"][:-1]
    with pytest.raises(ValueError, match="retrain"):
        LogisticModel.from_json(bad)


def _resolved(ents, typ, surface, subtype=None, recognizer="spacy_ner"):
    ent = ents.resolve(typ, surface, subtype, recognizer)
    ent["surface"] = ent.get("surface") or surface
    return ent


def test_policy_keeps_direct_and_thresholds_the_rest():
    ents = DocumentEntities("d")
    person = _resolved(ents, "PERSON", "Jan Kowalski", "PERSON")
    singer = _resolved(ents, "DEM", "singer", "OCCUPATION", "gazetteer")
    weights = np.zeros(len(FEATURE_NAMES))
    weights[FEATURE_NAMES.index("subtype=OCCUPATION")] = -5.0
    policy = LearnedPolicy(LogisticModel(weights, 1.0, 0.5))
    assert policy.classify(person, ents) == "DIRECT"  # the rules' full name, whatever the model says
    assert policy.classify(singer, ents) == "NO_MASK"  # sigmoid(1 - 5) < 0.5
    assert LearnedPolicy(LogisticModel(weights, 1.0, 0.01)).classify(singer, ents) == "QUASI"
    assert policy.trace(singer, ents)["probability"] == pytest.approx(1 / (1 + np.exp(4)), abs=1e-4)
    x = entity_features(singer, ents, "QUASI")
    assert x[FEATURE_NAMES.index("lower_case")] == 1.0 and x[FEATURE_NAMES.index("recognizer=gazetteer")] == 1.0


def test_shipped_model_loads_through_the_config():
    assert DEFAULT_MODEL.exists()
    policy = make_policy({"kind": "learned", "threshold": 0.3})
    assert isinstance(policy, LearnedPolicy) and policy.model.threshold == 0.3
    assert "echr_train_first100.json docs 0:50" in policy.model.trained_on


def test_training_labels_follow_the_annotators():
    text = "Mr Jan Kowalski, a singer, lives in Warsaw."
    gold = [GoldMention("m1", "e1", "PERSON", "DIRECT", 0, 15, "Mr Jan Kowalski"),
            GoldMention("m2", "e2", "LOC", "QUASI", 36, 42, "Warsaw")]
    doc = TabDocument("d", text, annotations={"ann1": gold})
    ents = DocumentEntities("d")
    spans = []
    for surface, typ, sub in (("Mr Jan Kowalski", "PERSON", "PERSON"), ("singer", "DEM", "OCCUPATION"),
                              ("Warsaw", "LOC", "GPE")):
        ent = _resolved(ents, typ, surface, sub)
        start = text.index(surface)
        spans.append(EntitySpan(start, start + len(surface), typ, "QUASI", ent["id"], surface))
    X, y = training_examples([doc], [spans], [ents])
    assert X.shape == (3, len(FEATURE_NAMES))
    assert y.tolist() == [1.0, 0.0, 1.0]  # the singer is not masked by the annotator
