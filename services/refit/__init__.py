"""The refit service."""
