"""The cluster service."""
