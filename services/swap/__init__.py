"""The swap service."""
