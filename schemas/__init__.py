"""JSON Schemas of every topic's record (the wire contracts), shipped as package data."""
