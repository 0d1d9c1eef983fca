"""PII detection, identifier typing and operators (the pii stage's core)."""
