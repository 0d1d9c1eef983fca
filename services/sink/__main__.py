"""`python -m anonstream_services.sink`: the sink stage as a Kafka service."""
from anonstream.runtime.service import main

main("sink")
