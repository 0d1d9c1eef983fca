"""The CLI's defaults are what the stream runs with: each is compared with the stage or setting the stream uses,
so a change to one side alone fails here."""
from __future__ import annotations

import inspect
import os

import pytest

from anonstream.cli import build_parser
from anonstream.config import Settings


@pytest.fixture(autouse=True)
def shipped_environment(monkeypatch):
    """No ANONSTREAM_* variable: the settings the stream ships with."""
    for name in [n for n in os.environ if n.startswith("ANONSTREAM_")]:
        monkeypatch.delenv(name)


def parse(*argv: str):
    return build_parser().parse_args(list(argv))


class _NoModel:
    model_name = "none"

    def __init__(self, *args, **kwargs):
        pass

    def encode(self, texts):
        raise AssertionError("not called")


def refitter_from_environment(monkeypatch):
    import anonstream.embedding
    from anonstream.hierarchy.registry import InMemoryHierarchyRegistry
    from anonstream.hierarchy.stream import HierarchyRefitter

    monkeypatch.setattr(anonstream.embedding, "Embedder", _NoModel)
    monkeypatch.setenv("ANONSTREAM_HIERARCHY_CATEGORIES", "Occupation")
    return HierarchyRefitter.from_env(InMemoryHierarchyRegistry(), "none")


@pytest.mark.parametrize("command", [("hierarchy", "build", "--category", "c", "--values", "v.txt"),
                                     ("hierarchy", "adult-bench", "--data", "adult")])
def test_hierarchy_commands_build_what_the_refit_stage_builds(monkeypatch, command):
    stream = refitter_from_environment(monkeypatch)
    args = parse(*command)
    assert (args.method, args.cut, args.weights, args.ratio) == (stream.method, stream.cut, stream.weights,
                                                                 stream.ratio)


def test_mixture_fit_fits_what_the_cluster_stage_fits():
    args = parse("mixture", "fit", "--embeddings", "X.npy", "--out", "m.npz")
    shipped = Settings()
    assert (args.family, args.k, args.min_weight) == (shipped.mixture_family, shipped.mixture_k,
                                                      shipped.mixture_min_weight)


@pytest.mark.parametrize("command", [("attack",), ("plan-release", "--input", "i", "--candidates", "c", "--out", "o")])
def test_attack_commands_cut_and_label_as_the_audit_attacker(command):
    from anonstream.stages.audit_attack import AttackMonitor

    args = parse(*command)
    audit_chunk_lines = inspect.signature(AttackMonitor.from_corpus).parameters["lines_per_chunk"].default
    assert (args.label_key, args.lines_per_chunk) == (Settings().audit_attack_label, audit_chunk_lines)


@pytest.mark.parametrize("command", ["pitman", "uniqueness"])
def test_risk_commands_take_the_population_the_audit_takes(command):
    from anonstream.swap.release import Release

    assert parse("risk", command, "--sizes", "s.json").population == Release.default().superpopulation_size


def test_detect_batches_as_the_pii_service():
    assert parse("detect", "--input", "-", "--output", "-").batch_size == Settings().pii_max_batch


def test_train_detector_trains_as_the_shipped_detector_was_trained():
    import json

    from anonstream.detector.recognizer import SHIPPED

    trained = json.loads((SHIPPED / "detector.json").read_text())
    args = parse("train-detector", "--out", "model")
    assert (args.epochs, args.seed) == (trained["epochs"], trained["seed"])
