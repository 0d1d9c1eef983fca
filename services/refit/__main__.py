"""`python -m anonstream_services.refit`: the refit stage as a Kafka service."""
from anonstream.runtime.service import main

main("refit")
