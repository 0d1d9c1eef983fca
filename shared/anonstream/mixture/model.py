"""A fitted spherical mixture: batch scoring, cluster assignment and (de)serialization.

Mixture density sum_k pi_k f(x | mu_k, rho_k) (paper 000, eq. 2.3) with f from eq. 2.1 / 2.2;
membership l = argmax_k pi_k f(x | phi_k) / sum_j pi_j f(x | phi_j) (paper 000, §2.2.1).
"""
from __future__ import annotations

import io
from dataclasses import dataclass

import numpy as np

from .families import Family, log_density_from_cos

_ARRAYS = ("mu", "rho", "pi")
_SCALARS = ("family", "n_train", "train_loglik", "created_at", "embedding_model", "n_iter", "converged")


@dataclass
class SphericalMixture:
    """Parameters of a K-component mixture on S^{d-1} and how it was trained.

    ``mu`` K x d float32 unit rows, ``rho`` K in [0, 1), ``pi`` K summing to 1 (float64);
    ``created_at`` is UNIX time in seconds; ``train_loglik`` the log-likelihood (eq. 2.3, natural
    log, densities w.r.t. the normalized uniform measure) of the ``n_train`` training points.
    """

    family: Family
    mu: np.ndarray
    rho: np.ndarray
    pi: np.ndarray
    n_train: int
    train_loglik: float
    created_at: float
    embedding_model: str = ""
    n_iter: int = 0
    converged: bool = False

    def __post_init__(self) -> None:
        self.family = Family(self.family)
        self.mu = np.ascontiguousarray(np.atleast_2d(self.mu), dtype=np.float32)
        self.rho = np.asarray(self.rho, dtype=np.float64).reshape(-1)
        self.pi = np.asarray(self.pi, dtype=np.float64).reshape(-1)
        k = self.mu.shape[0]
        if self.rho.shape != (k,) or self.pi.shape != (k,):
            raise ValueError(f"mu has {k} rows but rho {self.rho.shape}, pi {self.pi.shape}")
        self.n_train = int(self.n_train)
        self.train_loglik = float(self.train_loglik)
        self.created_at = float(self.created_at)
        self.embedding_model = str(self.embedding_model)
        self.n_iter = int(self.n_iter)
        self.converged = bool(self.converged)

    @property
    def k(self) -> int:
        return self.mu.shape[0]

    @property
    def dim(self) -> int:
        return self.mu.shape[1]

    def log_component_densities(self, X: np.ndarray) -> np.ndarray:
        """(n, K) log f(x_i | mu_k, rho_k) (eq. 2.1 / 2.2) with one matrix product.

        The product runs in X's precision (float32 X: the fast float32 kernel; otherwise
        float64); everything after it is float64.
        """
        X = np.asarray(X)
        if X.ndim != 2 or X.shape[1] != self.dim:
            raise ValueError(f"expected an (n, {self.dim}) array, got shape {X.shape}")
        if X.dtype == np.float32:
            cos = X @ self.mu.T
        else:
            cos = np.asarray(X, dtype=np.float64) @ self.mu.T.astype(np.float64)
        return log_density_from_cos(cos, self.rho, self.family, self.dim)

    def _log_joint(self, X: np.ndarray) -> np.ndarray:
        """(n, K) log pi_k + log f(x_i | phi_k)."""
        L = self.log_component_densities(X)
        L += np.log(self.pi)
        return L

    def log_density(self, X: np.ndarray) -> np.ndarray:
        """(n,) log sum_k pi_k f(x_i | phi_k) (eq. 2.3)."""
        return self.assign(X)[2]

    def assign(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """MAP membership of a batch: (labels l_i, posterior of l_i, log mixture density of x_i)."""
        L = self._log_joint(X)
        labels = L.argmax(axis=1)
        top = np.take_along_axis(L, labels[:, None], axis=1)
        L -= top
        np.exp(L, out=L)
        total = L.sum(axis=1)  # sum_k exp(L_k - L_max) >= 1
        return labels, 1.0 / total, top[:, 0] + np.log(total)

    def sanity_errors(self) -> list[str]:
        """Reasons this model must not be served (empty list when it is fine)."""
        errors = []
        if self.k == 0:
            return ["mixture has no components"]
        for name in _ARRAYS:
            if not np.all(np.isfinite(getattr(self, name))):
                errors.append(f"{name} has NaN or inf entries")
        if not np.isfinite(self.train_loglik):
            errors.append("train_loglik is not finite")
        bad_rho = np.flatnonzero(~((self.rho >= 0.0) & (self.rho < 1.0)))
        if bad_rho.size:
            errors.append(f"rho outside [0, 1) for components {bad_rho.tolist()}")
        zero = np.flatnonzero(~(self.pi > 0.0))
        if zero.size:
            errors.append(f"zero or negative weight for components {zero.tolist()}")
        if not abs(self.pi.sum() - 1.0) <= 1e-6:
            errors.append(f"weights sum to {self.pi.sum()!r}, not 1")
        empty = np.flatnonzero((self.pi > 0.0) & (self.pi * self.n_train < 1.0))
        if empty.size:
            errors.append(
                f"components {empty.tolist()} expect fewer than one of {self.n_train} training points"
            )
        norms = np.linalg.norm(self.mu.astype(np.float64), axis=1)
        off = np.flatnonzero(~(np.abs(norms - 1.0) <= 1e-4))
        if off.size:
            errors.append(f"mu rows {off.tolist()} are not unit vectors")
        return errors

    def _arrays(self) -> dict[str, np.ndarray]:
        out = {name: getattr(self, name) for name in _ARRAYS}
        out.update({name: np.asarray(getattr(self, name)) for name in _SCALARS})
        out["family"] = np.asarray(self.family.value)
        return out

    @classmethod
    def _from_arrays(cls, z) -> "SphericalMixture":
        fields = {name: z[name] for name in _ARRAYS}
        fields.update({name: z[name][()] for name in _SCALARS if name in z})
        return cls(**fields)

    def save_npz(self, path) -> None:
        """Write arrays ``mu`` (K x d), ``rho`` (K), ``pi`` (K), ``family`` and the metadata."""
        with open(path, "wb") as fh:
            np.savez(fh, **self._arrays())

    @classmethod
    def load_npz(cls, path) -> "SphericalMixture":
        with np.load(path, allow_pickle=False) as z:
            return cls._from_arrays(z)

    def to_bytes(self) -> bytes:
        """The ``save_npz`` content in memory (for the model registry)."""
        buf = io.BytesIO()
        np.savez(buf, **self._arrays())
        return buf.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> "SphericalMixture":
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            return cls._from_arrays(z)
