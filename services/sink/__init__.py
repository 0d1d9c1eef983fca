"""The sink service."""
