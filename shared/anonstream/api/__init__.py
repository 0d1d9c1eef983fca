"""The REST API (``anonstream serve``): pure handlers in presidio.py and documents.py, FastAPI wiring in app.py."""
