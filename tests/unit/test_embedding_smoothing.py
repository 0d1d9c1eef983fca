"""SmoothQuant smoothing of the feed-forward output projections (``embedding_onnx.smoothed_int8``, measured
beside the shipped int8 export): the scales (eq. 4), the graph rewrite (eq. 3) that keeps the function, the
calibration statistics over unpadded tokens, and the smoothed export of the real model."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

from anonstream.embedding import DEFAULT_MODEL, resolve_model_path
from anonstream.embedding_onnx import (CALIBRATION, OnnxEncoder, activation_max, calibration_texts, dynamic_int8,
                                       exported, ffn_output_projections, smooth, smoothed_int8, smoothing_scales)

SENTENCES = [
    "The applicant was born in 1961 and lives in Vilnius.",
    "On 3 March 2004 the Regional Court dismissed the appeal lodged by the applicant's lawyer.",
    "The hearing was adjourned.",
    "Quarterly revenue grew 12 percent to $4.2 billion, driven by cloud services in Europe and Asia.",
]
PROJECTION = "/model/encoder/layer.0/output/dense/MatMul"  # named as in the exported transformer
CHANNELS, OUT = 64, 32


def relu_projection(weight: np.ndarray) -> onnx.ModelProto:
    """y = relu(x) @ weight, x of shape (batch, sequence, CHANNELS): the shape of a feed-forward output
    projection behind its activation, with the transformer's attention mask as an input (unused until smoothed)."""
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["act"], name="act"),
         helper.make_node("MatMul", ["act", "w"], ["y"], name=PROJECTION)],
        "projection",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "sequence", CHANNELS]),
         helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "sequence"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "sequence", OUT])],
        [numpy_helper.from_array(weight, "w")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=10)


def run(model: onnx.ModelProto | Path, x: np.ndarray, mask: np.ndarray) -> np.ndarray:
    source = str(model) if isinstance(model, Path) else model.SerializeToString()
    session = onnxruntime.InferenceSession(source, providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x, "attention_mask": mask})[0]


@pytest.fixture()
def outliers() -> tuple[np.ndarray, np.ndarray]:
    """Inputs whose channels 3 and 40 run 60x larger than the rest (as GELU outputs do), and a weight."""
    rng = np.random.default_rng(7)
    x = np.abs(rng.standard_normal((4, 16, CHANNELS), dtype=np.float32))
    x[..., [3, 40]] *= 60
    weight = (rng.standard_normal((CHANNELS, OUT)) / np.sqrt(CHANNELS)).astype(np.float32)
    return x, weight


def test_scales_split_the_range_between_activations_and_weights():
    rng = np.random.default_rng(1)
    act_max = rng.uniform(0.1, 50, CHANNELS).astype(np.float32)
    weight = rng.standard_normal((CHANNELS, OUT)).astype(np.float32)
    w_max = np.abs(weight).max(axis=1)
    for alpha in (0.5, 0.8):
        s = smoothing_scales(act_max, weight, alpha)
        assert s.shape == (CHANNELS,) and s.dtype == np.float32
        assert np.allclose(act_max / s, act_max ** (1 - alpha) * w_max ** (1 - alpha), rtol=1e-4)
        assert np.allclose(w_max * s, act_max ** alpha * w_max ** alpha, rtol=1e-4)
    balanced = smoothing_scales(act_max, weight, 0.5)
    assert np.allclose(act_max / balanced, w_max * balanced, rtol=1e-4)  # a = 0.5: equal maxima per channel
    assert np.isfinite(smoothing_scales(np.zeros(CHANNELS, np.float32), weight, 0.5)).all()


def test_activation_max_counts_only_unpadded_tokens(outliers):
    x, weight = outliers
    mask = np.ones(x.shape[:2], dtype=np.int64)
    mask[0, 10:] = 0
    x = x.copy()
    x[0, 10:] = 1e6  # padding positions: whatever they hold must not count
    batches = [(np.arange(2), {"x": x[:2], "attention_mask": mask[:2]}, mask[:2]),
               (np.arange(2, 4), {"x": x[2:], "attention_mask": mask[2:]}, mask[2:])]
    peaks = activation_max(relu_projection(weight), ["act"], batches)
    real = x[mask.astype(bool)]
    assert np.allclose(peaks["act"], np.maximum(real, 0).max(axis=0))


def test_smoothing_keeps_the_function_and_lowers_the_int8_error(outliers, tmp_path: Path):
    x, weight = outliers
    mask = np.ones(x.shape[:2], dtype=np.int64)
    plain = relu_projection(weight)
    exact = run(plain, x, mask)
    smoothed = relu_projection(weight)
    smooth(smoothed, activation_max(smoothed, ["act"], [(np.arange(4), {"x": x, "attention_mask": mask}, mask)]), 0.5)
    ops = [n.op_type for n in smoothed.graph.node]
    assert ops == ["Cast", "Unsqueeze", "Relu", "Mul", "Mul", "MatMul"]
    assert len(ffn_output_projections(smoothed.graph)) == 1
    assert np.allclose(run(smoothed, x, mask), exact, atol=1e-4)
    padded = mask.copy()
    padded[1, 12:] = 0
    out = run(smoothed, x, padded)
    assert np.allclose(out[padded.astype(bool)], exact[padded.astype(bool)], atol=1e-4)
    assert not out[1, 12:].any()  # padding rows zeroed: they no longer enter the activation range

    errors = {}
    for name, model in (("plain", plain), ("smoothed", smoothed)):
        onnx.save(model, str(tmp_path / f"{name}.onnx"))
        dynamic_int8(tmp_path / f"{name}.onnx", tmp_path / f"{name}-int8.onnx")
        errors[name] = np.abs(run(tmp_path / f"{name}-int8.onnx", x, mask) - exact).mean()
    assert errors["smoothed"] < 0.5 * errors["plain"], errors


def test_calibration_texts_are_the_ingest_chunks_in_file_order():
    texts = calibration_texts()
    assert texts == calibration_texts()  # a fixed set in a fixed order: a reproducible export
    doc = json.loads(CALIBRATION.read_text(encoding="utf-8").splitlines()[0])["text"]
    head = ""
    for text in texts:
        if len(head) >= len(doc):
            break
        head += text
    assert head == doc  # the first document's chunks come first and partition its text


def test_smoothed_export_quantizes_every_matmul_and_keeps_the_vectors(tmp_path: Path):
    """On the shipped model, calibrated on a few chunks: no fp32 MatMul left, each FFN-out behind its padding
    mask and smoothing Mul, and the vectors close to the fp32 export's (the shipped int8 keeps FFN-out fp32)."""
    path = resolve_model_path(DEFAULT_MODEL)
    shipped = onnx.load(str(exported(path, "int8")))
    assert sum(n.op_type == "MatMul" for n in shipped.graph.node) == 6
    encoder = OnnxEncoder(path, "fp32")
    target = tmp_path / "model-int8-smooth.onnx"
    smoothed_int8(encoder.path, target, encoder.tokenizer, encoder.max_seq_length, calibration_texts()[:24])
    model = onnx.load(str(target))
    assert "MatMul" not in [n.op_type for n in model.graph.node]
    assert sum(n.op_type == "Mul" and n.name.endswith(("/Smooth", "/Mask")) for n in model.graph.node) == 12
    assert not list(tmp_path.glob("smoothed-fp32-*"))
    reference = encoder.encode(SENTENCES, 4)
    cos = (OnnxEncoder(path, "int8", path=target).encode(SENTENCES, 4) * reference).sum(axis=1)
    assert cos.min() > 0.97, cos
