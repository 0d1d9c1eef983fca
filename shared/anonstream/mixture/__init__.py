"""Spherical mixtures (Poisson-kernel-based and spherical Cauchy) fitted by EM (paper 000 §2.2)."""
