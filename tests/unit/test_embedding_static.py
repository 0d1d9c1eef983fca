"""The static embedding backend (issue 27, item 2): backend selection, the embedding space a vector and a mixture
record, the cluster stage keeping one space per mixture version, and the pure parts of the distillation and the
encoder (on a tiny tokenizer and table made here, no model loaded)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from anonstream import embedding, topics
from anonstream.embedding import Embedder, parse_space, space_name, static
from anonstream.records import Chunk
from anonstream.stages.cluster import ClusterStage
from anonstream.stores.base import InMemoryModelRegistry
from anonstream.swap.testing import make_chunk


def test_the_static_backend_is_selectable_by_the_setting_and_names_its_own_space(monkeypatch):
    table = TinyStatic()
    monkeypatch.setattr(embedding, "load_static_encoder", lambda name: table)
    monkeypatch.setenv("ANONSTREAM_EMBED_BACKEND", "static")
    embedder = Embedder("all-MiniLM-L6-v2")
    assert embedder.backend == "static" and embedder.dim == table.dim
    assert embedder.model == "all-MiniLM-L6-v2"
    assert embedder.model_name == f"all-MiniLM-L6-v2@static-{static.DIMS}-r{static.RECIPE}"


def test_a_recorded_static_space_name_runs_the_static_backend_whatever_the_setting(monkeypatch):
    monkeypatch.setattr(embedding, "load_static_encoder", lambda name: TinyStatic())
    monkeypatch.setenv("ANONSTREAM_EMBED_BACKEND", "onnx")
    name = space_name("all-MiniLM-L6-v2", "static")
    embedder = Embedder(name)  # a hierarchy's embedding_model, re-embedded by a generalizer
    assert embedder.backend == "static" and embedder.model_name == name


def test_the_transformer_backends_share_one_space_the_model_name():
    for backend in ("onnx", "onnx-fp32", "torch"):
        assert space_name("all-MiniLM-L6-v2", backend) == "all-MiniLM-L6-v2"
    assert parse_space("all-MiniLM-L6-v2") == ("all-MiniLM-L6-v2", None)
    assert parse_space(space_name("m", "static")) == ("m", "static")
    with pytest.raises(ValueError, match="one of"):
        Embedder("all-MiniLM-L6-v2", backend="model2vec")


def test_the_embed_stage_writes_the_space_on_each_vector_and_the_bootstrapped_mixture_records_it(monkeypatch):
    from anonstream.stages.embed import EmbedStage

    monkeypatch.setattr(embedding, "load_static_encoder", lambda name: TinyStatic())
    embedder = Embedder("all-MiniLM-L6-v2", backend="static")
    batch = [make_chunk("d", i, "alpha beta gamma" if i % 2 else "beta delta", component=None) for i in range(40)]
    out = EmbedStage(embedder).process([(None, c) for c in batch])
    wire = [emits[0].value for emits in out]
    assert {w["embedding"]["model"] for w in wire} == {embedder.model_name}
    registry = InMemoryModelRegistry()
    updates = ClusterStage(registry, k=2).process([(None, Chunk.from_wire(w)) for w in wire])
    events = [e.value for emits in updates for e in emits if e.topic is topics.MODEL_UPDATES]
    assert [e["embedding_model"] for e in events] == [embedder.model_name]
    assert registry.load(registry.current_version()).info["embedding_model"] == embedder.model_name


def vectors(n: int, dim: int, space: str, seed: int) -> list[Chunk]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        v = rng.normal(size=dim)
        chunk = make_chunk(f"{space}-{seed}", i, "Text.", component=None)
        chunk.embedding = {"model": space, "dim": dim, "vector": (v / np.linalg.norm(v)).tolist()}
        out.append(chunk)
    return out


def test_no_mixture_version_assigns_chunks_of_another_embedding_space():
    registry = InMemoryModelRegistry()
    stage = ClusterStage(registry, k=2)
    stage.process([(None, c) for c in vectors(40, 8, "minilm", 0)])
    first = stage.model_version
    assert registry.load(first).info["embedding_model"] == "minilm"
    # the embed service now runs another backend: a new version is bootstrapped in the chunks' space
    out = stage.process([(None, c) for c in vectors(40, 6, "minilm@static-6-r1", 1)])
    clustered = [e.value for emits in out for e in emits if e.topic is topics.CHUNKS_CLUSTERED]
    assert stage.model_version != first and stage.space_changes == 1
    assert registry.load(stage.model_version).info["embedding_model"] == "minilm@static-6-r1"
    assert all(c["cluster"]["model_version"] == stage.model_version and "previous" not in c["cluster"]
               for c in clustered)


def test_a_chunk_of_another_space_than_its_batch_loses_its_vector_and_gets_no_component():
    from anonstream import contracts

    stage = ClusterStage(InMemoryModelRegistry(), k=2)
    batch = vectors(3, 8, "minilm", 0) + vectors(40, 6, "static", 1)
    out = stage.process([(None, c) for c in batch])
    clustered = [e.value for emits in out for e in emits if e.topic is topics.CHUNKS_CLUSTERED]
    assert [("cluster" in c, "embedding" in c) for c in clustered] == [(False, False)] * 3 + [(True, True)] * 40
    assert stage.metrics()["foreign_space"] == 3 and stage.model.embedding_model == "static"
    for c in clustered[:4]:
        contracts.validate("chunk-clustered.v1.json", c)


def test_a_model_without_a_recorded_space_is_kept():
    registry = InMemoryModelRegistry()
    stage = ClusterStage(registry, k=2)
    stage.process([(None, c) for c in vectors(40, 8, "", 0)])
    version = stage.model_version
    stage.process([(None, c) for c in vectors(10, 8, "minilm", 1)])
    assert stage.model_version == version and stage.space_changes == 0


# --- the pure parts of the distillation and the encoder -----------------------------------------------------------

def test_pca_keeps_the_leading_components_with_the_largest_score_positive():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 3)) * np.array([5.0, 2.0, 0.1])
    scores = static.pca(X, 2)
    assert scores.shape == (500, 2)
    assert np.allclose(scores.mean(axis=0), 0, atol=1e-9)
    assert scores[:, 0].var() > scores[:, 1].var() > 1.0  # the two large axes, in order
    assert all(scores[np.argmax(np.abs(scores[:, j])), j] > 0 for j in range(2))


def test_sif_weights_grow_with_the_vocabulary_rank():
    w = static.sif_weights(30522)
    assert np.all(np.diff(w) > 0) and 0 < w[0] < w[-1] < 1


class TinyStatic:
    """A StaticEncoder over a word-level tokenizer of four words and a table made here."""

    def __new__(cls):
        return make_tiny_encoder()


def make_tiny_encoder(tmp=None):
    import tempfile
    from pathlib import Path

    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import Whitespace

    directory = Path(tmp or tempfile.mkdtemp(prefix="tiny-static-"))
    vocab = {"[UNK]": 0, "alpha": 1, "beta": 2, "gamma": 3, "delta": 4}
    tokenizer = Tokenizer(WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = Whitespace()
    tokenizer.save(str(directory / static.TOKENIZER))
    table = np.array([[9, 9, 9], [1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0]], dtype=np.float32)
    np.save(directory / static.TABLE, table)
    return static.StaticEncoder("unused", directory=directory, max_tokens=3)


def test_the_static_encoder_averages_token_rows_skips_unknown_tokens_and_normalizes():
    encoder = make_tiny_encoder()
    out = encoder.encode(["alpha beta", "zzz gamma", "", "zzz", "alpha beta gamma delta"])
    assert out.shape == (5, 3) and out.dtype == np.float32
    assert np.allclose(out[0], np.array([1, 1, 0]) / np.sqrt(2))
    assert np.allclose(out[1], [0, 0, 1])  # the unknown word is not the [UNK] row
    assert np.allclose(out[2], 0) and np.allclose(out[3], 0)  # nothing known: the zero vector
    assert np.allclose(out[4], np.ones(3) / np.sqrt(3))  # cut at max_tokens: delta is not counted


def test_the_cache_entry_changes_with_the_recipe_and_the_dims(tmp_path, monkeypatch):
    (tmp_path / "config.json").write_text(json.dumps({"a": 1}))
    a = static.fingerprint(str(tmp_path), 256)
    assert static.fingerprint(str(tmp_path), 128) != a
    monkeypatch.setattr(static, "RECIPE", static.RECIPE + 1)
    assert static.fingerprint(str(tmp_path), 256) != a


def test_the_shipped_default_is_the_static_backend(monkeypatch):
    from anonstream.config import Settings

    monkeypatch.delenv("ANONSTREAM_EMBED_BACKEND", raising=False)
    assert Settings().embed_backend == "static"


def test_a_recorded_transformer_space_is_re_embedded_by_a_transformer_backend_whatever_the_setting(monkeypatch):
    """A hierarchy built with MiniLM records 'all-MiniLM-L6-v2': its generalizer must not embed in the static space."""
    calls = []
    monkeypatch.setattr(embedding, "load_onnx_encoder", lambda name, precision, threads: calls.append(precision)
                        or TinyStatic())
    monkeypatch.setattr(embedding, "load_static_encoder", lambda name: TinyStatic())
    monkeypatch.setenv("ANONSTREAM_EMBED_BACKEND", "static")
    plain = Embedder.for_space("all-MiniLM-L6-v2")
    assert plain.backend == "onnx" and plain.model_name == "all-MiniLM-L6-v2" and calls == ["int8"]
    monkeypatch.setenv("ANONSTREAM_EMBED_BACKEND", "onnx-fp32")
    assert Embedder.for_space("all-MiniLM-L6-v2").backend == "onnx-fp32"
    static_space = space_name("all-MiniLM-L6-v2", "static")
    assert Embedder.for_space(static_space).model_name == static_space
