"""`python -m anonstream_services.pii`: the pii stage as a Kafka service."""
from anonstream.runtime.service import main

main("pii")
