"""Connection security from the environment: aiokafka's TLS/SASL arguments (runtime/kafka.py) and the
Redis client (stores/redis_state.py). No broker or Redis needed: both clients connect lazily."""
from __future__ import annotations

import ssl
from pathlib import Path

import certifi
import pytest

from anonstream.config import Settings
from anonstream.runtime.kafka import security_options
from anonstream.stores.redis_state import connect, connect_settings

PASSWORD = "s3cret-from-the-environment"


def test_plaintext_by_default(monkeypatch):
    monkeypatch.delenv("ANONSTREAM_KAFKA_SECURITY_PROTOCOL", raising=False)
    assert security_options(Settings()) == {"security_protocol": "PLAINTEXT"}


def test_sasl_ssl_from_the_environment(monkeypatch):
    for name, value in {"KAFKA_SECURITY_PROTOCOL": "sasl_ssl", "KAFKA_SASL_USERNAME": "svc",
                        "KAFKA_SASL_PASSWORD": PASSWORD, "KAFKA_SSL_CAFILE": certifi.where()}.items():
        monkeypatch.setenv(f"ANONSTREAM_{name}", value)
    settings = Settings()
    options = security_options(settings)
    context = options.pop("ssl_context")
    assert options == {"security_protocol": "SASL_SSL", "sasl_mechanism": "SCRAM-SHA-512",
                       "sasl_plain_username": "svc", "sasl_plain_password": PASSWORD}
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    assert context.get_ca_certs(), "the CA file was not loaded"
    assert PASSWORD not in repr(settings.describe())  # the password is no setting: it is never logged with them


@pytest.mark.parametrize("protocol", ["SASL_SSL", "SASL_PLAINTEXT"])
def test_sasl_without_a_password_is_refused_before_connecting(monkeypatch, protocol):
    monkeypatch.delenv("ANONSTREAM_KAFKA_SASL_PASSWORD", raising=False)
    with pytest.raises(ValueError, match="ANONSTREAM_KAFKA_SASL_PASSWORD"):
        security_options(Settings(kafka_security_protocol=protocol, kafka_sasl_username="svc"))


@pytest.mark.parametrize("field, value, variable", [
    ("kafka_security_protocol", "TLS", "ANONSTREAM_KAFKA_SECURITY_PROTOCOL"),
    ("kafka_sasl_mechanism", "GSSAPI", "ANONSTREAM_KAFKA_SASL_MECHANISM"),
])
def test_unknown_values_are_named(monkeypatch, field, value, variable):
    monkeypatch.setenv("ANONSTREAM_KAFKA_SASL_PASSWORD", PASSWORD)
    settings = Settings(**{"kafka_security_protocol": "SASL_SSL", "kafka_sasl_username": "svc", field: value})
    with pytest.raises(ValueError, match=variable) as refused:
        security_options(settings)
    assert PASSWORD not in str(refused.value)


def test_redis_tls_and_acl_user_from_the_settings(monkeypatch):
    monkeypatch.setenv("ANONSTREAM_REDIS_PASSWORD", PASSWORD)
    client = connect_settings(Settings(redis_url="rediss://127.0.0.1:1/0", redis_username="svc",
                                       redis_ca_file=certifi.where()))
    kwargs = client.connection_pool.connection_kwargs
    assert client.connection_pool.connection_class.__name__ == "SSLConnection"
    assert (kwargs["username"], kwargs["password"]) == ("svc", PASSWORD)
    assert (kwargs["ssl_ca_certs"], kwargs["ssl_cert_reqs"], kwargs["ssl_check_hostname"]) == \
           (certifi.where(), "required", True)


def test_redis_plain_without_credentials():
    client = connect("redis://127.0.0.1:1/0")
    kwargs = client.connection_pool.connection_kwargs
    assert client.connection_pool.connection_class.__name__ == "Connection"
    assert kwargs.get("username") is None and kwargs.get("password") is None


@pytest.mark.parametrize("url, username, password, ca_file, variable", [
    ("redis://127.0.0.1:1/0", None, None, "ca.pem", "ANONSTREAM_REDIS_URL"),
    ("rediss://127.0.0.1:1/0", "svc", None, None, "ANONSTREAM_REDIS_PASSWORD"),
])
def test_redis_half_configured_is_refused(url, username, password, ca_file, variable):
    with pytest.raises(ValueError, match=variable):
        connect(url, username, password, ca_file)


def test_a_password_in_the_redis_url_is_masked_when_the_settings_are_logged():
    described = Settings(redis_url=f"rediss://svc:{PASSWORD}@redis:6380/0").describe()
    assert described["redis_url"] == "rediss://svc:***@redis:6380/0"


def test_compose_passes_the_security_settings_and_takes_passwords_from_the_host_environment_only():
    import yaml

    from anonstream.runtime.wiring import STAGE_NAMES

    compose = yaml.safe_load((Path(__file__).resolve().parents[2] / "deploy" / "docker-compose.yml").read_text())
    for stage in STAGE_NAMES:
        env = compose["services"][stage]["environment"]
        for name in ("KAFKA_SASL_PASSWORD", "REDIS_PASSWORD"):
            assert env[f"ANONSTREAM_{name}"] == f"${{ANONSTREAM_{name}:-}}", (stage, name)
        assert env["ANONSTREAM_KAFKA_SECURITY_PROTOCOL"] == "${ANONSTREAM_KAFKA_SECURITY_PROTOCOL:-PLAINTEXT}"
