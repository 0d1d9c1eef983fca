#!/usr/bin/env python3
"""Block until a Kafka cluster answers a Metadata request with at least N live brokers.

usage: wait_for_kafka.py [bootstrap] [expected_brokers] [timeout_s]
       defaults: 127.0.0.1:19092  1  90

Exit 0 when ready, 1 on timeout. Used by deploy/kafka-local.sh after the broker logged
"Kafka Server started"; the log line alone does not prove that clients can reach the
advertised listener, the metadata round trip does (and counts brokers for the 2-node mode).
Needs aiokafka (the project venv has it).
"""

from __future__ import annotations

import asyncio
import socket
import sys
import time

from aiokafka.admin import AIOKafkaAdminClient


def port_open(host: str, port: int) -> bool:
    """Cheap first check: Kafka opens its client port only once request processing is enabled."""
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


async def live_brokers(bootstrap: str) -> int:
    """Number of brokers in a Metadata response, or -1 if the round trip failed."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=5000)
    try:
        await admin.start()  # ApiVersions + Metadata round trip against the bootstrap servers
        info = await admin.describe_cluster()  # {'brokers': [...], 'controller_id': .., 'cluster_id': ..}
        return len(info.get("brokers", []))
    except Exception:  # noqa: BLE001 - any failure just means "not ready yet"
        return -1
    finally:
        await admin.close()


def main(argv: list[str]) -> int:
    bootstrap = argv[1] if len(argv) > 1 else "127.0.0.1:19092"
    expected = int(argv[2]) if len(argv) > 2 else 1
    timeout = float(argv[3]) if len(argv) > 3 else 90.0
    host, _, port = bootstrap.split(",")[0].rpartition(":")

    deadline = time.monotonic() + timeout
    seen = -1
    while time.monotonic() < deadline:
        if port_open(host, int(port)):
            seen = asyncio.run(live_brokers(bootstrap))
            if seen >= expected:
                print(f"kafka ready at {bootstrap} ({seen} broker(s))")
                return 0
        time.sleep(0.5)
    print(
        f"kafka NOT ready at {bootstrap} after {timeout:.0f}s "
        f"(expected {expected} broker(s), last metadata saw {seen})",
        file=sys.stderr,
    )
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
