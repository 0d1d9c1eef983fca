"""The audit service."""
