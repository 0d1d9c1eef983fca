"""The offline CLI: mixture fit/assign round trip on a known mixture."""
import numpy as np

from anonstream.cli import main
from anonstream.mixture.model import SphericalMixture


def _two_clusters(n=200, d=12, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(scale=0.1, size=(n, d))
    X[: n // 2, 0] += 1
    X[n // 2:, 1] += 1
    return (X / np.linalg.norm(X, axis=1, keepdims=True)).astype(np.float32)


def test_mixture_fit_then_assign(tmp_path):
    X = _two_clusters()
    np.save(tmp_path / "X.npy", X)
    assert main(["mixture", "fit", "--embeddings", str(tmp_path / "X.npy"), "--family", "scauchy", "-k", "2",
                 "--out", str(tmp_path / "m.npz")]) == 0
    with np.load(tmp_path / "m.npz") as z:
        assert z["mu"].shape == (2, 12) and z["rho"].shape == (2,) and z["pi"].shape == (2,)
    assert SphericalMixture.load_npz(tmp_path / "m.npz").family.value == "scauchy"
    assert main(["mixture", "assign", "--model", str(tmp_path / "m.npz"), "--embeddings", str(tmp_path / "X.npy"),
                 "--out", str(tmp_path / "labels.npy")]) == 0
    labels = np.load(tmp_path / "labels.npy")
    assert len(set(labels[:100])) == 1 and len(set(labels[100:])) == 1 and labels[0] != labels[-1]


def test_mixture_fit_selects_k_by_bic(tmp_path):
    from anonstream.mixture.em import fit_mixture, n_parameters

    X = _two_clusters(seed=1)
    np.save(tmp_path / "X.npy", X)
    assert main(["mixture", "fit", "--embeddings", str(tmp_path / "X.npy"), "--select-k", "1,2",
                 "--out", str(tmp_path / "m.npz")]) == 0
    bic = {k: -2 * (m := fit_mixture(X, "pkb", k)).train_loglik + n_parameters(m) * np.log(len(X)) for k in (1, 2)}
    assert SphericalMixture.load_npz(tmp_path / "m.npz").k == min(bic, key=bic.get) == 2
