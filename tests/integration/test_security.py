"""The services on a secured broker and Redis (deploy/secure-local.sh; `make test` starts them).

The broker takes SASL_SSL with SCRAM-SHA-512 only (its controller listener: TLS with a client
certificate), Redis TLS with its ACL user only. Every other way in is refused: plaintext, TLS without
SASL, SASL without TLS, a wrong password, a server certificate checked against the system CAs instead
of ours, Redis' default user; Redis' user reaches only the project's keys and no @dangerous command.
Then the ingest and pii services run against them, configured from the environment alone, and their
output arrives; the passwords appear in none of their log lines.
"""
from __future__ import annotations

import asyncio
import os
import shlex
import signal
import socket
import ssl
import subprocess
import sys
import time
import uuid
from dataclasses import replace
from pathlib import Path

import orjson
import pytest
import redis
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.errors import KafkaConnectionError

from anonstream import topics
from anonstream.config import Settings
from anonstream.runtime import clients
from anonstream.runtime.kafka import consumer, create_topics, security_options
from anonstream.stores.redis_state import connect_settings

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "sample" / "tab-train-100.jsonl"
N_DOCS = 3
WRONG_PASSWORD = "not-the-password"


@pytest.fixture(scope="module")
def secure_env() -> dict[str, str]:
    """The services' environment that `deploy/secure-local.sh up` wrote (its `env-file`)."""
    path = os.environ.get("ANONSTREAM_SECURE_ENV_FILE", "")
    if not path or not Path(path).is_file():
        message = ("secured Kafka/Redis not running: `eval \"$(deploy/secure-local.sh up)\"` and export "
                   "ANONSTREAM_SECURE_ENV_FILE=\"$(deploy/secure-local.sh env-file)\" (make test does)")
        if os.environ.get("ANONSTREAM_REQUIRE_INFRA") == "1":
            pytest.fail(message)
        pytest.skip(message)
    env = {}
    for line in Path(path).read_text().splitlines():
        words = shlex.split(line)
        if len(words) == 2 and words[0] == "export":
            name, _, value = words[1].partition("=")
            env[name] = value
    return env


@pytest.fixture
def secured(secure_env, monkeypatch) -> Settings:
    """Settings (and the passwords in this process' environment) for the secured pair."""
    for name, value in secure_env.items():
        monkeypatch.setenv(name, value)
    return Settings()


async def _kafka_metadata(settings: Settings) -> int:
    admin = AIOKafkaAdminClient(bootstrap_servers=settings.bootstrap, request_timeout_ms=5000,
                                **security_options(settings))
    try:
        await admin.start()
        return len((await admin.describe_cluster())["brokers"])
    finally:
        await admin.close()


def _kafka(settings: Settings) -> int:
    return asyncio.run(asyncio.wait_for(_kafka_metadata(settings), 60))


def test_kafka_accepts_the_services_settings(secured):
    assert _kafka(secured) == 1


@pytest.mark.parametrize("way_in, reason", [
    ("plaintext", "closed"),
    ("tls without sasl", "closed"),
    ("sasl without tls", "closed"),
    ("wrong password", "SaslAuthenticationFailed"),
    ("system CAs", "CERTIFICATE_VERIFY_FAILED"),
])
def test_kafka_refuses_every_other_way_in(secured, monkeypatch, caplog, way_in, reason):
    settings = {
        "plaintext": replace(secured, kafka_security_protocol="PLAINTEXT"),
        "tls without sasl": replace(secured, kafka_security_protocol="SSL"),
        "sasl without tls": replace(secured, kafka_security_protocol="SASL_PLAINTEXT"),
        "wrong password": secured,
        "system CAs": replace(secured, kafka_ssl_cafile=None),
    }[way_in]
    if way_in == "wrong password":
        monkeypatch.setenv("ANONSTREAM_KAFKA_SASL_PASSWORD", WRONG_PASSWORD)
    with caplog.at_level("WARNING", logger="aiokafka"):
        with pytest.raises(KafkaConnectionError):  # a refusal, not a hang: _kafka's time limit raises TimeoutError
            _kafka(settings)
    assert reason in caplog.text  # aiokafka logs why it could not bootstrap


def test_kafka_controller_listener_wants_a_client_certificate(secured):
    """Our CA's certificate on the controller port, but no client certificate: the broker ends the
    TLS session (TLS 1.3 sends that alert after the handshake, at the first read)."""
    port = int(os.environ.get("ANONSTREAM_SECURE_KAFKA_CONTROLLER_PORT", "19193"))
    context = ssl.create_default_context(cafile=secured.kafka_ssl_cafile)
    with pytest.raises((ssl.SSLError, ConnectionError)):
        with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
            with context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
                tls.sendall(b"\x00\x00\x00\x00")
                if not tls.recv(1):
                    raise ConnectionError("closed by the broker")


def _redis_ping(settings: Settings) -> bool:
    client = connect_settings(settings)
    try:
        return client.ping()
    finally:
        client.close()


def test_redis_accepts_the_services_settings(secured):
    assert _redis_ping(secured)


@pytest.mark.parametrize("way_in, refusal", [
    ("plaintext", redis.ConnectionError),
    ("default user", redis.AuthenticationError),
    ("wrong password", redis.AuthenticationError),
    ("system CAs", redis.ConnectionError),
])
def test_redis_refuses_every_other_way_in(secured, monkeypatch, way_in, refusal):
    settings = {
        "plaintext": replace(secured, redis_url=secured.redis_url.replace("rediss://", "redis://"), redis_ca_file=None),
        "default user": replace(secured, redis_username=None),
        "wrong password": secured,
        "system CAs": replace(secured, redis_ca_file=None),
    }[way_in]
    if way_in == "default user":
        monkeypatch.delenv("ANONSTREAM_REDIS_PASSWORD")
    if way_in == "wrong password":
        monkeypatch.setenv("ANONSTREAM_REDIS_PASSWORD", WRONG_PASSWORD)
    with pytest.raises(refusal):
        _redis_ping(settings)


@pytest.mark.parametrize("command", [("SET", "outside-the-namespace", "1"), ("FLUSHALL",), ("KEYS", "*")])
def test_redis_user_is_limited_to_the_projects_keys_and_safe_commands(secured, command):
    client = connect_settings(secured)
    try:
        with pytest.raises(redis.exceptions.NoPermissionError):
            client.execute_command(*command)
    finally:
        client.close()


async def _read_chunks(settings: Settings, want: dict[str, int], services, timeout_s: float) -> list[dict]:
    """Every chunk of ``want`` (doc_id -> chunk count) on the pii topic, through the secured broker."""
    client = consumer(settings, [topics.name(topics.CHUNKS_PII, settings.topic_prefix)],
                      f"{settings.topic_prefix}.test-reader")
    await client.start()
    seen: dict[tuple[str, int], dict] = {}
    deadline = time.monotonic() + timeout_s
    try:
        while len(seen) < sum(want.values()) and time.monotonic() < deadline:
            for name, (process, log_path) in services.items():
                assert process.poll() is None, f"service {name} died:\n{log_path.read_text()[-3000:]}"
            for records in (await client.getmany(timeout_ms=1000)).values():
                for record in records:
                    chunk = orjson.loads(record.value)
                    seen[chunk["doc_id"], chunk["chunk_index"]] = chunk
    finally:
        await client.stop()
    return list(seen.values())


@pytest.fixture
def services(secured, secure_env, tmp_path):
    """The ingest and pii services as processes; the secrets reach them through the environment only."""
    prefix = f"it-sec-{uuid.uuid4().hex[:8]}"
    env = {**os.environ, **secure_env, "ANONSTREAM_TOPIC_PREFIX": prefix, "ANONSTREAM_TENANT": prefix,
           "ANONSTREAM_PSEUDONYM_KEY": uuid.uuid4().hex + uuid.uuid4().hex}
    settings = replace(secured, topic_prefix=prefix, tenant=prefix)
    asyncio.run(create_topics(settings))
    processes = {}
    for name in ("ingest", "pii"):
        log_path = tmp_path / f"{name}.log"
        with log_path.open("wb") as log_file:
            processes[name] = (subprocess.Popen([sys.executable, "-m", "anonstream.cli", "service", name], env=env,
                                                stdout=log_file, stderr=subprocess.STDOUT), log_path)
    yield settings, processes
    for process, _ in processes.values():
        process.send_signal(signal.SIGTERM)
    for process, _ in processes.values():
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    client = connect_settings(settings)
    keys = list(client.scan_iter(f"anonstream:{prefix}:*")) + list(client.scan_iter(f"anonstream:{{{prefix}|*"))
    if keys:
        client.delete(*keys)
    client.close()


def test_ingest_and_pii_services_run_on_the_secured_pair(services, secure_env):
    settings, processes = services
    with SAMPLE.open("rb") as handle:  # the shortest few: the services' start-up is the slow part anyway
        documents = sorted((orjson.loads(line) for line in handle), key=lambda d: len(d["text"]))[:N_DOCS]
    assert asyncio.run(clients.produce(settings, documents, progress=False)) == N_DOCS

    from anonstream.records import Document
    from anonstream.stages.ingest import IngestStage

    ingest = IngestStage(settings.chunk_max_chars, settings.chunk_max_sentences)
    want = {d["doc_id"]: len(list(ingest.chunks(Document.from_wire(d)))) for d in documents}
    chunks = asyncio.run(_read_chunks(settings, want, processes, timeout_s=240))

    assert {(c["doc_id"], c["chunk_index"]) for c in chunks} == {(d, i) for d, n in want.items() for i in range(n)}
    assert any(c["entities"] for c in chunks), "the pii stage found no entity in three TAB documents"
    client = connect_settings(settings)
    try:  # the pii stage keeps its pseudonyms in the secured Redis (stores/redis_pseudonyms.py)
        assert any(True for _ in client.scan_iter(f"anonstream:{{{settings.tenant}|*:pseud:m:*", count=1000))
    finally:
        client.close()
    secrets = [secure_env["ANONSTREAM_KAFKA_SASL_PASSWORD"], secure_env["ANONSTREAM_REDIS_PASSWORD"]]
    for name, (_, log_path) in processes.items():
        log_text = log_path.read_text(errors="replace")
        assert not [s for s in secrets if s in log_text], f"a password is in the {name} service's log"


def test_produce_names_the_security_settings_when_the_broker_refuses(secured, monkeypatch):
    monkeypatch.setenv("ANONSTREAM_KAFKA_SASL_PASSWORD", WRONG_PASSWORD)
    with pytest.raises(clients.ClientError, match=r"over SASL_SSL \(or refused the ANONSTREAM_KAFKA_\* credentials"):
        asyncio.run(clients.produce(secured, [], progress=False))
