"""`python -m anonstream_services.ingest`: the ingest stage as a Kafka service."""
from anonstream.runtime.service import main

main("ingest")
