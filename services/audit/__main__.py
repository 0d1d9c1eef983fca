"""`python -m anonstream_services.audit`: the audit stage as a Kafka service."""
from anonstream.runtime.service import main

main("audit")
