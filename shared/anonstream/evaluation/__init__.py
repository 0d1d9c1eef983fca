"""Evaluation of the anonymization stages against public benchmarks (TAB, Wikipedia biographies)."""
