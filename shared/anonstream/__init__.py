"""anonstream: streaming text anonymization (common library: records, stage cores, runtime)."""

__version__ = "0.1.0"
