"""`python -m anonstream_services.swap`: the swap stage as a Kafka service."""
from anonstream.runtime.service import main

main("swap")
