"""``anonstream mixture fit|assign``: offline fitting and assignment of spherical mixtures."""
from __future__ import annotations

import argparse
import sys

import numpy as np

from ..config import Settings
from .em import fit_mixture, select_k
from .families import Family
from .model import SphericalMixture


def _fit(args: argparse.Namespace) -> int:
    X = np.load(args.embeddings)
    if args.select_k:
        ks = [int(k) for k in args.select_k.split(",")]
        model = select_k(X, args.family, ks, criterion=args.criterion, min_weight=args.min_weight, seed=args.seed)
    else:
        model = fit_mixture(X, args.family, args.k, min_weight=args.min_weight, seed=args.seed)
    errors = model.sanity_errors()
    if errors:
        print(f"model failed sanity checks, not written: {errors}", file=sys.stderr)
        return 1
    model.save_npz(args.out)
    print(f"{model.family.value}: K={model.k} (asked {args.k}), n={model.n_train}, d={model.dim}, "
          f"loglik={model.train_loglik:.3f}, iterations={model.n_iter}, converged={model.converged} -> {args.out}",
          file=sys.stderr)
    return 0


def _assign(args: argparse.Namespace) -> int:
    model = SphericalMixture.load_npz(args.model)
    labels, posterior, log_density = model.assign(np.load(args.embeddings))
    np.save(args.out, labels)
    sizes = np.bincount(labels, minlength=model.k)
    print(f"{len(labels)} points -> {args.out}; component sizes {sizes.tolist()}; "
          f"mean MAP posterior {posterior.mean():.3f}; mean log-density {log_density.mean():.3f}", file=sys.stderr)
    return 0


def add_commands(subparsers) -> None:
    mixture = subparsers.add_parser("mixture", help="fit or apply a spherical mixture (paper 000, eq. 2.1-2.3)")
    sub = mixture.add_subparsers(dest="mixture_command", required=True)
    fit = sub.add_parser("fit", help="fit by EM; writes npz with mu (K x d), rho (K), pi (K), family")
    fit.add_argument("--embeddings", required=True, help=".npy, n x d (rows are normalized)")
    stream = Settings()  # the cluster stage's family, K and ε
    fit.add_argument("--family", choices=[f.value for f in Family], default=stream.mixture_family,
                     help="default: ANONSTREAM_MIXTURE_FAMILY (%(default)s)")
    fit.add_argument("-k", type=int, default=stream.mixture_k,
                     help="number of components (default: ANONSTREAM_MIXTURE_K, %(default)s)")
    fit.add_argument("--min-weight", type=float, default=stream.mixture_min_weight,
                     help="ε: components below it are dropped (default: ANONSTREAM_MIXTURE_MIN_WEIGHT, %(default)s)")
    fit.add_argument("--select-k", help="comma-separated candidate K values; keep the best by --criterion")
    fit.add_argument("--criterion", choices=["bic", "aic"], default="bic")
    fit.add_argument("--seed", type=int, default=0)
    fit.add_argument("--out", required=True)
    fit.set_defaults(func=_fit)
    assign = sub.add_parser("assign", help="MAP component of each row; writes labels .npy")
    assign.add_argument("--model", required=True)
    assign.add_argument("--embeddings", required=True)
    assign.add_argument("--out", required=True)
    assign.set_defaults(func=_assign)
