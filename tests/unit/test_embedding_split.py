"""The int8 export's split of each feed-forward block at its outlier channels (``embedding_onnx.split_feed_forward``,
``split_int8``): the channel choice, the rewrite that keeps the function, the calibration statistics over
unpadded tokens, the lower int8 error, and the shipped export of the real model."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

from anonstream.embedding import DEFAULT_MODEL, resolve_model_path
from anonstream.embedding_onnx import (CALIBRATION, OUTLIER_CHANNELS, OnnxEncoder, activation_max,
                                       calibration_texts, dynamic_int8, exported, ffn_output_projections,
                                       outlier_channels, split_feed_forward)

SENTENCES = [
    "The applicant was born in 1961 and lives in Vilnius.",
    "On 3 March 2004 the Regional Court dismissed the appeal lodged by the applicant's lawyer.",
    "The hearing was adjourned.",
    "Quarterly revenue grew 12 percent to $4.2 billion, driven by cloud services in Europe and Asia.",
]
LAYER = "/model/encoder/layer.0"  # node names as in the exported transformer
HIDDEN, CHANNELS = 32, 128
OUTLIERS = [3, 40, 77]


def feed_forward(w1: np.ndarray, b1: np.ndarray, w2: np.ndarray) -> onnx.ModelProto:
    """y = BiasGelu(x @ w1, b1) @ w2 with the BERT optimizer's node names, x of shape (batch, sequence, HIDDEN),
    the transformer's attention mask as an (unused) input as in the real graph."""
    act = f"{LAYER}/intermediate/intermediate_act_fn/Mul_1_output_0"
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w1"], ["h"], name=f"{LAYER}/intermediate/dense/MatMul"),
         helper.make_node("BiasGelu", ["h", "b1"], [act], name="Gelu_AddBias_0", domain="com.microsoft"),
         helper.make_node("MatMul", [act, "w2"], ["y"], name=f"{LAYER}/output/dense/MatMul")],
        "feed_forward",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "sequence", HIDDEN]),
         helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "sequence"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "sequence", HIDDEN])],
        [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(b1, "b1"), numpy_helper.from_array(w2, "w2")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)],
                             ir_version=10)


def run(model: onnx.ModelProto | Path, x: np.ndarray, mask: np.ndarray, output: str = "y") -> np.ndarray:
    """The tensor ``output`` of ``model`` (a file or a ModelProto; an inner tensor of a ModelProto too) on ``x``."""
    if output != "y":
        probe = onnx.ModelProto()
        probe.CopyFrom(model)
        probe.graph.output.append(helper.make_tensor_value_info(output, TensorProto.FLOAT, None))
        model = probe
    source = str(model) if isinstance(model, Path) else model.SerializeToString()
    session = onnxruntime.InferenceSession(source, providers=["CPUExecutionProvider"])
    return session.run([output], {"x": x, "attention_mask": mask})[0]


@pytest.fixture()
def block() -> tuple[np.ndarray, onnx.ModelProto]:
    """Inputs and a feed-forward block whose channels OUTLIERS fire ~40x higher than the rest after GELU (their
    W1 columns and biases scaled up), as a few channels of MiniLM's do."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((4, 16, HIDDEN), dtype=np.float32)
    w1 = (rng.standard_normal((HIDDEN, CHANNELS)) / np.sqrt(HIDDEN)).astype(np.float32)
    b1 = np.zeros(CHANNELS, np.float32)
    w1[:, OUTLIERS] *= 10
    b1[OUTLIERS] = 30
    w2 = (rng.standard_normal((CHANNELS, HIDDEN)) / np.sqrt(CHANNELS)).astype(np.float32)
    return x, feed_forward(w1, b1, w2)


def act_name(model: onnx.ModelProto) -> str:
    return ffn_output_projections(model.graph)[0].input[0]


def test_outlier_channels_are_the_highest_peaks_in_channel_order():
    peaks = np.array([0.5, 9.0, 1.0, 7.0, 9.0, 0.1], np.float32)
    assert outlier_channels(peaks, 2).tolist() == [1, 4]  # ties: the first channels first
    assert outlier_channels(peaks, 3).tolist() == [1, 3, 4]
    assert outlier_channels(peaks, 0).tolist() == []


def test_activation_max_counts_only_unpadded_tokens(block):
    x, model = block
    mask = np.ones(x.shape[:2], dtype=np.int64)
    mask[0, 10:] = 0
    x = x.copy()
    x[0, 10:] = 1e3  # padding positions: whatever they hold must not count
    batches = [(np.arange(2), {"x": x[:2], "attention_mask": mask[:2]}, mask[:2]),
               (np.arange(2, 4), {"x": x[2:], "attention_mask": mask[2:]}, mask[2:])]
    name = act_name(model)
    peaks = activation_max(model, [name], batches)
    acts = run(model, x, mask, output=name)
    assert np.allclose(peaks[name], np.abs(acts[mask.astype(bool)]).max(axis=0))
    assert outlier_channels(peaks[name], len(OUTLIERS)).tolist() == OUTLIERS


def test_split_keeps_the_function_and_lowers_the_int8_error(block, tmp_path: Path):
    x, plain = block
    mask = np.ones(x.shape[:2], dtype=np.int64)
    exact = run(plain, x, mask)
    split = onnx.ModelProto()
    split.CopyFrom(plain)
    name = act_name(split)
    regular, outliers = split_feed_forward(split, activation_max(split, [name], [(np.arange(4), {"x": x, "attention_mask": mask}, mask)]),
                                           len(OUTLIERS))
    ops = [n.op_type for n in split.graph.node]
    assert sorted(ops) == ["Add", "BiasGelu", "BiasGelu", "MatMul", "MatMul", "MatMul", "MatMul"]
    assert regular == [f"{LAYER}/output/dense/MatMul/regular"]
    assert outliers == [f"{LAYER}/intermediate/dense/MatMul/outliers", f"{LAYER}/output/dense/MatMul/outliers"]
    shapes = {i.name: tuple(i.dims) for i in split.graph.initializer}
    assert shapes[f"{LAYER}/output/dense/MatMul/outliers/w2"] == (len(OUTLIERS), HIDDEN)
    assert shapes[f"{LAYER}/output/dense/MatMul/regular/w1"] == (HIDDEN, CHANNELS - len(OUTLIERS))
    assert not {"w1", "b1", "w2"} & set(shapes)  # the unsplit weights are gone
    assert np.allclose(run(split, x, mask), exact, atol=1e-4)

    onnx.save(plain, str(tmp_path / "plain.onnx"))
    onnx.save(split, str(tmp_path / "split.onnx"))
    dynamic_int8(tmp_path / "plain.onnx", tmp_path / "plain-int8.onnx")
    dynamic_int8(tmp_path / "split.onnx", tmp_path / "split-int8.onnx", excluded=outliers, unsigned=regular)
    quantized = onnx.load(str(tmp_path / "split-int8.onnx"))
    assert [n.name for n in quantized.graph.node if n.op_type == "MatMul"] == sorted(outliers, key=lambda n: "output" in n)
    assert not list(tmp_path.glob("signed-*"))
    errors = {name: np.abs(run(tmp_path / f"{name}-int8.onnx", x, mask) - exact).mean() for name in ("plain", "split")}
    assert errors["split"] < 0.5 * errors["plain"], errors


def test_split_refuses_a_block_it_does_not_know():
    model = feed_forward(np.ones((HIDDEN, CHANNELS), np.float32), np.zeros(CHANNELS, np.float32),
                         np.ones((CHANNELS, HIDDEN), np.float32))
    model.graph.node[1].op_type = "Relu"
    del model.graph.node[1].input[1:]
    with pytest.raises(ValueError, match="BiasGelu"):
        split_feed_forward(model, {act_name(model): np.ones(CHANNELS, np.float32)}, 2)


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


def test_shipped_int8_export_is_split_and_keeps_the_vectors():
    """The cached export: per layer the outlier part's two MatMuls are the only fp32 ones, OUTLIER_CHANNELS wide,
    and the vectors stay close to the fp32 export's (the 0.99 bound against torch: test_embedding_onnx)."""
    path = resolve_model_path(DEFAULT_MODEL)
    model = onnx.load(str(exported(path, "int8")))
    fp32 = [n.name for n in model.graph.node if n.op_type == "MatMul"]
    assert len(fp32) == 12 and all(name.endswith("/outliers") for name in fp32)
    shapes = {i.name: tuple(i.dims) for i in model.graph.initializer}
    assert shapes[f"{LAYER}/output/dense/MatMul/outliers/w2"] == (OUTLIER_CHANNELS, 384)
    assert sum(n.op_type == "Add" and n.name.endswith("/sum") for n in model.graph.node) == 6
    reference = OnnxEncoder(path, "fp32").encode(SENTENCES, 4)
    cos = (OnnxEncoder(path, "int8").encode(SENTENCES, 4) * reference).sum(axis=1)
    assert cos.min() > 0.99, cos
