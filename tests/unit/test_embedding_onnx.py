"""The ONNX Runtime embedding backend against sentence-transformers (torch) on the shipped MiniLM model,
and the fallback to torch. The export runs once into the cache (``make setup`` does it beforehand)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from anonstream.embedding import DEFAULT_MODEL, Embedder, resolve_model_path
from anonstream.embedding.onnx import exported, length_batches, pad_batch, unsupported_reason

SENTENCES = [
    "The applicant was born in 1961 and lives in Vilnius.",
    "On 3 March 2004 the Regional Court dismissed the appeal lodged by the applicant's lawyer.",
    "The Government submitted that the complaint was inadmissible for failure to exhaust domestic remedies, "
    "since the applicant had not brought a civil action for damages against the police officers concerned.",
    "Mr Kowalski, a Polish national, complained under Article 6 § 1 of the Convention about the length of "
    "the proceedings.",
    "The hearing was adjourned.",
    "Quarterly revenue grew 12 percent to $4.2 billion, driven by cloud services in Europe and Asia.",
]


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(axis=1)


@pytest.fixture(scope="module")
def torch_vectors() -> np.ndarray:
    return Embedder(DEFAULT_MODEL, batch_size=4, backend="torch").encode(SENTENCES)


def test_onnx_fp32_equals_torch(torch_vectors):
    embedder = Embedder(DEFAULT_MODEL, batch_size=4, backend="onnx-fp32")
    assert embedder.backend == "onnx-fp32"
    vectors = embedder.encode(SENTENCES)
    assert vectors.shape == torch_vectors.shape and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert cosines(vectors, torch_vectors).min() > 0.9999


def test_onnx_int8_within_bound_of_torch(torch_vectors):
    embedder = Embedder(DEFAULT_MODEL, batch_size=4, backend="onnx")
    assert embedder.backend == "onnx" and embedder.encoder.precision == "int8"
    cos = cosines(embedder.encode(SENTENCES), torch_vectors)
    assert cos.min() >= 0.99, cos


def test_batching_and_order_do_not_change_vectors():
    embedder = Embedder(DEFAULT_MODEL, batch_size=2, backend="onnx-fp32")
    alone = np.vstack([embedder.encode([s]) for s in SENTENCES])
    assert np.abs(embedder.encode(SENTENCES) - alone).max() < 1e-4  # padding is masked out of the mean
    assert embedder.encode([]).shape == (0, embedder.dim)


def test_export_is_cached():
    path = exported(resolve_model_path(DEFAULT_MODEL), "int8")
    before = path.stat().st_mtime_ns
    assert exported(resolve_model_path(DEFAULT_MODEL), "int8") == path
    assert path.stat().st_mtime_ns == before


def test_unsupported_model_falls_back_to_torch(tmp_path: Path, caplog):
    """A model with CLS pooling is not what the ONNX path computes: it refuses, the Embedder runs torch."""
    source = Path(resolve_model_path(DEFAULT_MODEL))
    model = tmp_path / "cls-model"
    shutil.copytree(source, model)
    pooling = model / "1_Pooling" / "config.json"
    config = json.loads(pooling.read_text())
    config.update(pooling_mode_mean_tokens=False, pooling_mode_cls_token=True)
    pooling.write_text(json.dumps(config))
    assert unsupported_reason(str(model)) == "pooling ['pooling_mode_cls_token'], not mean"
    assert unsupported_reason(str(tmp_path)) is not None
    embedder = Embedder(str(model), batch_size=4, backend="onnx")
    assert embedder.backend == "torch"
    assert "using torch" in caplog.text
    reference = Embedder(str(model), batch_size=4, backend="torch").encode(SENTENCES[:2])
    assert np.allclose(embedder.encode(SENTENCES[:2]), reference, atol=1e-6)


def test_unknown_backend_is_refused():
    with pytest.raises(ValueError, match="backend"):
        Embedder(DEFAULT_MODEL, backend="tensorflow")


def test_length_batches_sort_by_token_count_and_cover_every_text():
    batches = length_batches([3, 9, 1, 9, 5], 2)
    assert [b.tolist() for b in batches] == [[1, 3], [4, 0], [2]]  # decreasing length, ties in input order
    assert sorted(np.concatenate(batches).tolist()) == list(range(5))
    assert length_batches([], 4) == []
    with pytest.raises(ValueError):
        length_batches([1], 0)


def test_pad_batch_pads_to_the_longest_with_a_mask():
    ids, mask = pad_batch([[7, 8, 9], [5]], pad_id=0)
    assert ids.tolist() == [[7, 8, 9], [5, 0, 0]] and mask.tolist() == [[1, 1, 1], [1, 0, 0]]
    assert ids.dtype == np.int64 and mask.dtype == np.int64
    ids, mask = pad_batch([[7, 8, 9], [5]], pad_id=1, left=True)
    assert ids.tolist() == [[7, 8, 9], [1, 1, 5]] and mask.tolist() == [[1, 1, 1], [0, 0, 1]]


def test_token_sorted_batches_match_the_tokenizers_own_padding():
    """The encoder's own padding feeds the model what ``tokenizer(padding=True)`` would."""
    encoder = Embedder(DEFAULT_MODEL, batch_size=3, backend="onnx").encoder
    reference = encoder.tokenizer(SENTENCES[:3], padding=True, truncation="longest_first",
                                  max_length=encoder.max_seq_length, return_tensors="np")
    plain = encoder.tokenizer(SENTENCES[:3], truncation="longest_first", max_length=encoder.max_seq_length)
    ids, mask = pad_batch(plain["input_ids"], encoder.tokenizer.pad_token_id)
    assert np.array_equal(ids, reference["input_ids"]) and np.array_equal(mask, reference["attention_mask"])
