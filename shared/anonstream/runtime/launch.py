"""Start the stage services as local processes (``anonstream service <stage>``, one process each), as the
integration tests, the chaos suite and the Kafka benchmark run the whole pipeline on a real broker and Redis.

``service_env`` builds the environment of one pipeline (its own topic prefix and tenant, a fresh pseudonym
key); ``start_service`` starts one stage with its output in a log file; ``is_consuming`` reads from that log
whether the stage's consumer has joined its group; ``stop_services`` stops them (SIGTERM, then SIGKILL).
"""
from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Iterable, Mapping


def service_env(bootstrap: str, redis_url: str, tag: str, overrides: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment plus one pipeline's settings: topic prefix and tenant ``<tag>-<run id>``,
    a random pseudonym key, K=4 mixture components; ``overrides`` are further ``ANONSTREAM_*`` variables."""
    run = f"{tag}-{uuid.uuid4().hex[:8]}"
    return {
        **os.environ,
        "ANONSTREAM_BOOTSTRAP": bootstrap,
        "ANONSTREAM_REDIS_URL": redis_url,
        "ANONSTREAM_TOPIC_PREFIX": run,
        "ANONSTREAM_TENANT": run,
        "ANONSTREAM_PSEUDONYM_KEY": secrets.token_hex(32),
        "ANONSTREAM_MIXTURE_K": "4",
        **(overrides or {}),
    }


def start_service(name: str, env: Mapping[str, str], log_path: Path, metrics_port: int | None = None,
                  instance: int | None = None) -> subprocess.Popen:
    """``anonstream service <name>`` with stdout and stderr appended to ``log_path``; ``metrics_port`` sets
    ANONSTREAM_METRICS_PORT, ``instance`` ANONSTREAM_INSTANCE (a further replica of the stage)."""
    extra = {}
    if metrics_port is not None:
        extra["ANONSTREAM_METRICS_PORT"] = str(metrics_port)
    if instance is not None:
        extra["ANONSTREAM_INSTANCE"] = str(instance)
    with Path(log_path).open("ab") as log:
        return subprocess.Popen([sys.executable, "-m", "anonstream.cli", "service", name],
                                env={**env, **extra}, stdout=log, stderr=subprocess.STDOUT)


def is_consuming(log_text: str, name: str) -> bool:
    """Whether this log shows the stage's consumer running (the line ``StageService.run`` logs after it started)."""
    return f"service {name}@" in log_text


def stop_services(processes: Iterable[subprocess.Popen], timeout_s: float = 30) -> None:
    """SIGTERM every running process, then wait for each; SIGKILL the ones still up after ``timeout_s``."""
    processes = list(processes)
    for process in processes:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
    for process in processes:
        try:
            process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
