"""Sequential L1 multinomial-logit synthesizer (paper 003 §3, eq. 1-3).

For fields y_1..y_r in a fixed order, field j is modelled on x~_i = (bag of words of the text, one-hot of
y_i1..y_i(j-1)) by a multinomial logit (eq. 1) whose coefficients carry a Laplace prior of inverse scale λ
(eq. 2). The posterior mode is the LASSO estimate (§3.3), fitted by scikit-learn's ``saga`` solver on the
**true** earlier fields; synthesis draws y_ij from the plug-in predictive (eq. 3) conditioned on the
**synthetic** earlier fields (§2.3).

Scale of λ (digest §3.3): the objective is -(1/n) log L + λ ||u||_1 (glmnet's scale, columns standardized),
i.e. sklearn's ``C = 1 / (n λ)``. After standardizing, the design is divided by its largest row norm: a uniform
rescaling multiplies λ_max and the solution's λ by the same constant, so R means the same, and it keeps the
unpenalized intercept on the features' scale, without which ``saga`` does not converge on p >> n designs. The knob is R = λ / λ_max, where λ_max, the smallest λ at which every
coefficient is zero, is max_{j,k} |(1/n) sum_i x_ij (1[y_i = k] - p̄_k)| (the gradient at the intercept-only
fit, p̄ the field's empirical distribution). The intercept is not penalized, so **at R >= 1 every draw comes
from the field's empirical marginal distribution, not the uniform one** (digest §3.5): the release then says
nothing about the text, but it does reproduce the marginal.
"""
from __future__ import annotations

import io
import json
import warnings
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler, normalize

__all__ = ["FieldModel", "SequentialSynthesizer", "TextFeatures", "lambda_max"]

_LETTERS = r"(?u)\b[^\W\d_]{2,}\b"      # lowercase words, digits and punctuation stripped (digest §2.2(a))


@dataclass
class TextFeatures:
    """Bag-of-words frequencies of the text (paper 003 §2.2(a)): lowercase letter-only words, each row
    divided by its word count, vocabulary = words in at least ``min_df`` documents (at most ``max_features``)."""

    min_df: int = 2
    max_features: int | None = 5000
    vectorizer: CountVectorizer | None = None

    def fit(self, texts: Sequence[str]) -> "TextFeatures":
        self.vectorizer = CountVectorizer(lowercase=True, token_pattern=_LETTERS, min_df=self.min_df,
                                          max_features=self.max_features).fit(texts)
        return self

    @classmethod
    def from_vocabulary(cls, words: Sequence[str]) -> "TextFeatures":
        """The fitted features again from their vocabulary (column order), e.g. loaded from the registry."""
        return cls(vectorizer=CountVectorizer(lowercase=True, token_pattern=_LETTERS,
                                              vocabulary={w: i for i, w in enumerate(words)}))

    def vocabulary(self) -> list[str]:
        return [] if self.vectorizer is None else self.vectorizer.get_feature_names_out().tolist()

    def transform(self, texts: Sequence[str]) -> sp.csr_matrix:
        if self.vectorizer is None:
            raise RuntimeError("TextFeatures.fit first")
        return normalize(self.vectorizer.transform(texts).astype(np.float64), norm="l1", copy=False).tocsr()

    @property
    def vocabulary_size(self) -> int:
        return len(self.vocabulary())


def _one_hot(values: Sequence[str], levels: Sequence[str]) -> sp.csr_matrix:
    index = {v: i for i, v in enumerate(levels)}
    cols = np.array([index[v] for v in values], dtype=np.int64)
    return sp.csr_matrix((np.ones(len(values)), (np.arange(len(values)), cols)), shape=(len(values), len(levels)))


def lambda_max(X: sp.spmatrix | np.ndarray, y: Sequence[str]) -> float:
    """Smallest λ with every coefficient zero (the start of the λ path, digest §3.3): the largest absolute
    gradient of -(1/n) log L at the intercept-only fit, max_{j,k} |X^T (Y - p̄)|_jk / n."""
    levels, codes = np.unique(np.asarray(y, dtype=object), return_inverse=True)
    n = len(codes)
    Y = np.zeros((n, len(levels)))
    Y[np.arange(n), codes] = 1.0
    G = X.T @ (Y - Y.mean(axis=0, keepdims=True))
    return float(np.max(np.abs(G)) / n)


@dataclass
class FieldModel:
    """One link of the chain: the field, the fields it conditions on, and its fitted coefficients
    (``coef`` levels x columns, ``intercept`` per level; None: one level only, or R >= 1, the marginal)."""

    name: str
    previous: tuple[str, ...]
    levels: np.ndarray
    scale: np.ndarray                     # per column: 1 / (standard deviation x the largest row norm)
    coef: np.ndarray | None
    intercept: np.ndarray | None
    marginal: np.ndarray
    lambda_max: float
    lam: float

    @property
    def nonzero(self) -> int:
        return 0 if self.coef is None else int(np.count_nonzero(self.coef))

    def scaled(self, X: sp.csr_matrix) -> sp.csr_matrix:
        return sp.csr_matrix(X.multiply(self.scale[None, :]))

    def proba(self, X: sp.csr_matrix) -> np.ndarray:
        """Predictive probabilities over ``levels`` given the unscaled design (eq. 1 and eq. 3 with the
        plug-in mode): softmax of the linear predictor; the binary case is sklearn's one-column logit."""
        if self.coef is None:
            return np.tile(self.marginal, (X.shape[0], 1))
        eta = np.asarray(self.scaled(X) @ self.coef.T) + self.intercept[None, :]
        if eta.shape[1] == 1:
            eta = np.hstack([np.zeros_like(eta), eta])
        eta -= eta.max(axis=1, keepdims=True)
        P = np.exp(eta)
        return P / P.sum(axis=1, keepdims=True)


@dataclass
class SequentialSynthesizer:
    """Fit once per λ-ratio; draw as many synthetic copies as needed (paper 003 §3.4's algorithm)."""

    fields: tuple[str, ...]
    lambda_ratio: float
    text: TextFeatures = field(default_factory=TextFeatures)
    max_iter: int = 3000
    tol: float = 1e-3
    models: list[FieldModel] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.fields:
            raise ValueError("at least one field to synthesize")
        if len(set(self.fields)) != len(self.fields):
            raise ValueError("fields must be distinct")
        if not self.lambda_ratio > 0:
            raise ValueError("lambda_ratio must be > 0 (R = λ / λ_max)")

    @staticmethod
    def _design(Xt: sp.csr_matrix, values: dict[str, Sequence[str]], previous: tuple[str, ...],
                levels: dict[str, np.ndarray]) -> sp.csr_matrix:
        blocks = [Xt] + [_one_hot(values[p], levels[p]) for p in previous]
        return sp.hstack(blocks, format="csr")

    def fit(self, texts: Sequence[str], values: dict[str, Sequence[str]]) -> "SequentialSynthesizer":
        """Fit every link on the true values (paper 003 §2.3: fitting uses the confidential earlier fields)."""
        n = len(texts)
        for f in self.fields:
            if f not in values or len(values[f]) != n:
                raise ValueError(f"field {f!r}: need one value per text ({n})")
        if n < 2:
            raise ValueError("need at least two records")
        Xt = self.text.fit(texts).transform(texts)
        levels = {f: np.unique(np.asarray(values[f], dtype=object)).astype(str) for f in self.fields}
        self.models = []
        for j, f in enumerate(self.fields):
            previous = self.fields[:j]
            X = self._design(Xt, values, previous, levels)
            standardized = StandardScaler(with_mean=False).fit(X)
            Z = standardized.transform(X)
            row_scale = float(np.sqrt(Z.multiply(Z).sum(axis=1)).max()) or 1.0
            scale = 1.0 / (standardized.scale_ * row_scale)
            Xs = sp.csr_matrix(X.multiply(scale[None, :]))
            y = np.asarray(values[f], dtype=object).astype(str)
            counts = np.array([np.sum(y == level) for level in levels[f]], dtype=np.float64)
            lmax = lambda_max(Xs, y)
            lam = self.lambda_ratio * lmax
            coef = intercept = None
            if len(levels[f]) > 1 and self.lambda_ratio < 1.0 and lmax > 0:
                logit = LogisticRegression(l1_ratio=1.0, C=1.0 / (n * lam), solver="saga", max_iter=self.max_iter,
                                           tol=self.tol, random_state=0)     # saga's sampling order: repeatable
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    logit.fit(Xs, y)
                if not np.array_equal(logit.classes_, levels[f]):
                    raise RuntimeError(f"field {f!r}: the logit's classes differ from the levels")
                coef, intercept = logit.coef_.copy(), logit.intercept_.copy()
            self.models.append(FieldModel(f, previous, levels[f], scale, coef, intercept, counts / counts.sum(),
                                          lmax, lam))
        return self

    def levels(self) -> dict[str, np.ndarray]:
        return {m.name: m.levels for m in self.models}

    def sample(self, texts: Sequence[str], rng: np.random.Generator,
               allowed: dict[str, list[set[str] | None]] | None = None) -> tuple[dict[str, list[str]], dict[str, np.ndarray]]:
        """One synthetic copy: field by field, each drawn from its predictive given the text and the
        **synthetic** earlier fields (§2.3). ``allowed[field][i]``, when a set, restricts record i's draw to
        those levels (renormalized; the consistency rule, ``consistency.py``). Returns the values and, per
        field, each record's predictive matrix (n x levels) it was drawn from."""
        if not self.models:
            raise RuntimeError("fit first")
        Xt = self.text.transform(texts)
        levels = self.levels()
        synthetic: dict[str, list[str]] = {}
        probabilities: dict[str, np.ndarray] = {}
        for m in self.models:
            X = self._design(Xt, synthetic, m.previous, levels)
            P = m.proba(X)
            restrict = (allowed or {}).get(m.name)
            if restrict is not None:
                for i, allowed_i in enumerate(restrict):
                    if allowed_i:
                        mask = np.isin(m.levels, sorted(allowed_i))
                        if mask.any():
                            P[i] = np.where(mask, P[i], 0.0) / P[i, mask].sum()
            u = rng.random(len(texts))[:, None]
            idx = np.minimum((P.cumsum(axis=1) < u).sum(axis=1), len(m.levels) - 1)
            synthetic[m.name] = [str(v) for v in m.levels[idx]]
            probabilities[m.name] = P
        return synthetic, probabilities

    def to_bytes(self) -> bytes:
        """A portable model (npz: the arrays, plus a JSON header; no pickle), for the registry."""
        header = {"fields": list(self.fields), "lambda_ratio": self.lambda_ratio, "vocabulary": self.text.vocabulary(),
                  "models": [{"name": m.name, "previous": list(m.previous), "levels": m.levels.tolist(),
                              "lambda_max": m.lambda_max, "lambda": m.lam, "fitted": m.coef is not None}
                             for m in self.models]}
        arrays = {"header": np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)}
        for j, m in enumerate(self.models):
            arrays[f"scale_{j}"], arrays[f"marginal_{j}"] = m.scale, m.marginal
            if m.coef is not None:
                arrays[f"coef_{j}"], arrays[f"intercept_{j}"] = m.coef, m.intercept
        buffer = io.BytesIO()
        np.savez_compressed(buffer, **arrays)
        return buffer.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> "SequentialSynthesizer":
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            header = json.loads(z["header"].tobytes().decode())
            synthesizer = cls(tuple(header["fields"]), header["lambda_ratio"],
                              TextFeatures.from_vocabulary(header["vocabulary"]))
            for j, m in enumerate(header["models"]):
                synthesizer.models.append(FieldModel(
                    m["name"], tuple(m["previous"]), np.asarray(m["levels"], dtype=object).astype(str), z[f"scale_{j}"],
                    z[f"coef_{j}"] if m["fitted"] else None, z[f"intercept_{j}"] if m["fitted"] else None,
                    z[f"marginal_{j}"], m["lambda_max"], m["lambda"]))
        return synthesizer

    def summary(self) -> dict:
        return {"lambda_ratio": self.lambda_ratio, "vocabulary": self.text.vocabulary_size,
                "fields": {m.name: {"previous": list(m.previous), "levels": m.levels.tolist(),
                                    "lambda": m.lam, "lambda_max": m.lambda_max, "nonzero_coefficients": m.nonzero,
                                    "marginal": m.marginal.round(6).tolist()} for m in self.models}}
