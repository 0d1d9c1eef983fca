"""Embed only what needs it (issue 27, item 1): stages/embed.py ``needs_vector``, and the embed, cluster and refit
stages with chunks that carry no vector."""
from __future__ import annotations

import random

import numpy as np

from anonstream import topics
from anonstream.records import Chunk
from anonstream.sampling import in_sample, sample_key
from anonstream.stages.cluster import ClusterStage
from anonstream.stages.embed import EmbedStage, needs_vector
from anonstream.stages.refit import Refitter
from anonstream.stores.base import InMemoryModelRegistry, InMemoryReservoir
from anonstream.swap import InMemoryPoolStore, InMemoryTupleCounts, Release, SwapProcessor
from anonstream.swap.testing import make_chunk

TEMPLATES = (
    "{ORG#company:Siemens} built a plant in {LOC/GPE#city:Austin}.",  # swappable kinds
    "{LOC/GPE#country:Denmark} signed.",
    "Nothing to see here.",  # no entity
    "It was {DATETIME/DATE:May 2001}.",  # G category only
    "The {ORG~:Court of Cassation} ruled.",  # NO_MASK: not a mention under scope masked
    "{PERSON!:Ann Smith} wrote.",  # replaced by the pii stage already
    "A {ORG:Thing} of no kind.",  # S category, unknown kind: generalized, never swapped
    "{QUANTITY:40 EUR} and {MISC:Nobel Prize}.",
)


def chunks(n_docs: int = 3) -> list[Chunk]:
    return [make_chunk(f"d{d}", i, t, component=None) for d in range(n_docs) for i, t in enumerate(TEMPLATES)]


def no_values(release: Release, chunk: Chunk) -> bool:
    processor = SwapProcessor(release, InMemoryPoolStore(), InMemoryTupleCounts(), random.Random(0))
    return any(r["reason"] == "no_values" for r in processor.offer(chunk).log)


def test_without_samples_a_chunk_needs_a_vector_exactly_when_the_swap_stage_looks_for_its_partner():
    release = Release.default()
    decisions = [(needs_vector(c, release, 0.0, 0.0), no_values(release, c)) for c in chunks(1)]
    assert {needs for needs, _ in decisions} == {True, False}  # both kinds of chunk are in the set
    assert all(needs != nothing for needs, nothing in decisions)


def test_the_reservoir_sample_adds_chunks_with_nothing_to_swap_by_a_hash_of_their_key():
    release = Release.default()
    empty = [make_chunk(f"doc{i}", i % 7, "Nothing to see here.", component=None) for i in range(3000)]
    picked = [c for c in empty if needs_vector(c, release, 0.1, 0.0)]
    assert 0.08 < len(picked) / len(empty) < 0.12
    assert all(in_sample(sample_key(c.doc_id, c.chunk_index), 0.1) for c in picked)
    assert not any(needs_vector(c, release, 0.0, 1.0) for c in empty[:50])  # nothing the release could change


def test_every_chunk_the_release_may_change_in_the_du_sample_gets_a_vector():
    release = Release.default()
    dated = [make_chunk(f"doc{i}", 0, "It was {DATETIME/DATE:May 2001}.", component=None) for i in range(400)]
    assert not any(needs_vector(c, release, 0.0, 0.0) for c in dated)
    chosen = [needs_vector(c, release, 0.0, 0.25) for c in dated]
    assert chosen == [in_sample(sample_key(c.doc_id, 0), 0.25) for c in dated] and 60 < sum(chosen) < 140


class CountingEmbedder:
    model_name, dim = "fake", 4

    def __init__(self):
        self.texts: list[str] = []

    def encode(self, texts):
        self.texts += texts
        rng = np.random.default_rng(len(self.texts))
        X = rng.normal(size=(len(texts), self.dim)).astype(np.float32)
        return X / np.linalg.norm(X, axis=1, keepdims=True)


def test_the_embed_stage_embeds_only_chunks_that_need_a_vector_and_passes_the_others_on():
    release = Release.default()
    batch = chunks(2)
    embedder = CountingEmbedder()
    stage = EmbedStage(embedder, release, others_share=0.0, utility_share=0.0)
    out = stage.process([(topics.CHUNKS_PII, c) for c in batch])
    emitted = [emits[0].value for emits in out]
    wanted = [needs_vector(c, release, 0.0, 0.0) for c in batch]
    assert [("embedding" in e) for e in emitted] == wanted
    assert len(embedder.texts) == sum(wanted) < len(batch)
    assert all(e["lineage"]["embed"] == EmbedStage.version for e in emitted)
    assert stage.metrics() == {"embedded": sum(wanted), "skipped": len(batch) - sum(wanted)}
    everything = EmbedStage(CountingEmbedder())  # without a release: every chunk, as embed@1 did
    assert all("embedding" in emits[0].value for emits in everything.process([(None, c) for c in batch]))


def embedded(chunk: Chunk, seed: int, dim: int = 4) -> Chunk:
    v = np.random.default_rng(seed).normal(size=dim)
    chunk.embedding = {"model": "fake", "dim": dim, "vector": (v / np.linalg.norm(v)).tolist()}
    return chunk


def test_cluster_assigns_embedded_chunks_and_passes_the_others_on_without_a_component():
    stage = ClusterStage(InMemoryModelRegistry(), k=2)
    plain = [make_chunk("p", i, "Nothing.", component=None) for i in range(3)]
    out = stage.process([(None, c) for c in plain])  # no vector yet: no bootstrap, nothing published
    assert stage.model is None and all("cluster" not in e[0].value for e in out)
    mixed = [embedded(make_chunk("m", i, "Text.", component=None), i) if i % 2 else make_chunk("m", i, "Text.",
                                                                                             component=None)
             for i in range(40)]
    out = stage.process([(None, c) for c in mixed])
    records = [e.value for emits in out for e in emits if e.topic is topics.CHUNKS_CLUSTERED]
    assert len(records) == 40 and stage.model is not None
    assert [("cluster" in r) for r in records] == [("embedding" in r) for r in records] == [i % 2 == 1 for i in range(40)]
    assert sum(e.topic is topics.MODEL_UPDATES for emits in out for e in emits) == 1


def test_the_refit_reservoir_sees_only_chunks_with_a_vector():
    refitter = Refitter(InMemoryReservoir(100), InMemoryModelRegistry(), "pkb", 2, 1e-3, 60.0, 8)
    batch = [embedded(make_chunk("r", i, "Text.", component=None), i) if i < 5 else make_chunk("r", i, "Text.",
                                                                                              component=None)
             for i in range(12)]
    refitter.observe(batch)
    assert refitter.reservoir.seen() == 5
    refitter.observe(batch[5:])  # a batch with no vector at all
    assert refitter.reservoir.seen() == 5


def test_the_swap_stage_releases_a_chunk_without_a_vector_as_a_valid_sanitized_chunk():
    from anonstream import contracts

    release = Release.default()
    chunk = make_chunk("s", 0, "It was {DATETIME/DATE:May 2001}.", component=None)
    assert not needs_vector(chunk, release, 0.0, 0.0) and chunk.cluster is None
    out = SwapProcessor(release, InMemoryPoolStore(), InMemoryTupleCounts(), random.Random(0)).offer(chunk)
    assert [r["reason"] for r in out.log] == ["no_values"]
    contracts.validate("chunk-sanitized.v1.json", out.chunks[0].to_wire())


def test_every_embedder_of_a_model_in_a_process_shares_one_loaded_encoder(monkeypatch):
    """The embed stage's (threads from the settings), the audit's and a generalizer's (no threads given) Embedders
    ask the cached loader for the same encoder, so the model is loaded once per process."""
    import functools

    from anonstream import embedding

    loads = []

    @functools.lru_cache(maxsize=None)
    def fake_loader(name, precision, threads=0):
        loads.append((name, precision, threads))
        return type("Encoder", (), {"dim": 4})()

    monkeypatch.setattr(embedding, "load_onnx_encoder", fake_loader)
    monkeypatch.setenv("ANONSTREAM_EMBED_BACKEND", "onnx")
    monkeypatch.setenv("ANONSTREAM_EMBED_THREADS", "1")
    stage = embedding.Embedder("m", 16, threads=1)
    generalizer = embedding.Embedder("m")
    assert stage.encoder is generalizer.encoder and loads == [("m", "int8", 1)]
