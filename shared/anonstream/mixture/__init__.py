"""Spherical mixtures (Poisson-kernel-based and spherical Cauchy) fitted by EM (paper 000 §2.2)."""
from .em import fit_mixture, select_k
from .families import Family, log_density
from .model import SphericalMixture

__all__ = ["Family", "SphericalMixture", "fit_mixture", "log_density", "select_k"]
