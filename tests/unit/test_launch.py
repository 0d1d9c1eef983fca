"""runtime/launch.py: the environment of one pipeline's service processes, and the readiness check."""
from __future__ import annotations

from anonstream.runtime import launch


def test_service_env_gives_each_pipeline_its_own_prefix_tenant_and_key():
    a = launch.service_env("127.0.0.1:9092", "redis://127.0.0.1:6379/0", "bench", {"ANONSTREAM_MIXTURE_K": "8"})
    b = launch.service_env("127.0.0.1:9092", "redis://127.0.0.1:6379/0", "bench")
    assert a["ANONSTREAM_BOOTSTRAP"] == "127.0.0.1:9092"
    assert a["ANONSTREAM_REDIS_URL"] == "redis://127.0.0.1:6379/0"
    assert a["ANONSTREAM_TOPIC_PREFIX"].startswith("bench-") and a["ANONSTREAM_TENANT"] == a["ANONSTREAM_TOPIC_PREFIX"]
    assert a["ANONSTREAM_TOPIC_PREFIX"] != b["ANONSTREAM_TOPIC_PREFIX"]
    assert len(bytes.fromhex(a["ANONSTREAM_PSEUDONYM_KEY"])) == 32
    assert a["ANONSTREAM_PSEUDONYM_KEY"] != b["ANONSTREAM_PSEUDONYM_KEY"]
    assert a["ANONSTREAM_MIXTURE_K"] == "8" and b["ANONSTREAM_MIXTURE_K"] == "4"


def test_is_consuming_reads_the_line_the_service_logs_once_its_consumer_runs():
    line = "INFO service pii@3: consuming p.chunks.raw.v1 as group p.pii\n"
    assert launch.is_consuming("loading model\n" + line, "pii")
    assert not launch.is_consuming("loading model\n", "pii")
    assert not launch.is_consuming(line, "embed")
