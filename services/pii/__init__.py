"""The pii service."""
