"""`python -m anonstream_services.embed`: the embed stage as a Kafka service."""
from anonstream.runtime.service import main

main("embed")
