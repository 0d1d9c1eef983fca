"""`python -m anonstream_services.cluster`: the cluster stage as a Kafka service."""
from anonstream.runtime.service import main

main("cluster")
