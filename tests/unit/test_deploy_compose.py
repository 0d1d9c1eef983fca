"""Static checks of deploy/: the Compose file, the Dockerfile's view of the package layout, and the
shell scripts' syntax. No Docker engine, broker or Redis needed.

With a working `docker compose` the Compose file is also validated by Compose itself
(`docker compose config -q`); the structural YAML checks run either way."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
COMPOSE = DEPLOY / "docker-compose.yml"
DOCKERFILE = DEPLOY / "Dockerfile"
STAGES = ("ingest", "pii", "embed", "cluster", "refit", "swap", "sink", "audit")
SCRIPTS = sorted(DEPLOY.glob("*.sh"))


@pytest.fixture(scope="module")
def compose() -> dict:
    with COMPOSE.open() as f:
        return yaml.safe_load(f)  # resolves the x-* anchors / << merges like Compose does


def _docker_compose_available() -> bool:
    if shutil.which("docker") is None:
        return False
    try:
        result = subprocess.run(["docker", "compose", "version"], capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return result.returncode == 0


def test_stage_list_matches_the_code() -> None:
    from anonstream.runtime.wiring import STAGE_NAMES

    assert tuple(STAGE_NAMES) == STAGES


@pytest.mark.skipif(not _docker_compose_available(), reason="`docker compose` not available")
def test_compose_config_is_valid_for_docker_compose() -> None:
    env = {**os.environ, "ANONSTREAM_PSEUDONYM_KEY": "compose-config-test-key"}
    result = subprocess.run(["docker", "compose", "-f", str(COMPOSE), "config", "-q"],
                            capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 0, result.stderr


def test_every_service_has_an_image_or_a_build(compose: dict) -> None:
    for name, service in compose["services"].items():
        assert "image" in service or "build" in service, name


def test_all_stage_services_are_present(compose: dict) -> None:
    missing = set(STAGES) - set(compose["services"])
    assert not missing, f"stage services missing from docker-compose.yml: {sorted(missing)}"


@pytest.mark.parametrize("stage", STAGES)
def test_stage_service_runs_its_stage(compose: dict, stage: str) -> None:
    service = compose["services"][stage]
    assert service["command"] == ["anonstream", "service", stage]
    build = service["build"]
    assert (COMPOSE.parent / build["context"] / build["dockerfile"]).resolve() == DOCKERFILE
    env = service["environment"]
    assert env["ANONSTREAM_BOOTSTRAP"] == "kafka:9092"
    assert env["ANONSTREAM_REDIS_URL"] == "redis://redis:6379/0"
    # the secret is only ever interpolated from the host environment, never written in the file
    assert re.fullmatch(r"\$\{ANONSTREAM_PSEUDONYM_KEY:\?[^}]*\}", env["ANONSTREAM_PSEUDONYM_KEY"])
    assert service["depends_on"] == {
        "kafka": {"condition": "service_healthy"},
        "redis": {"condition": "service_healthy"},
        "topics": {"condition": "service_completed_successfully"},
    }


def test_depends_on_targets_are_declared_services(compose: dict) -> None:
    declared = set(compose["services"])
    for name, service in compose["services"].items():
        targets = service.get("depends_on", {})
        targets = list(targets) if isinstance(targets, (dict, list)) else [targets]
        unknown = set(targets) - declared
        assert not unknown, f"{name} depends on undeclared services {sorted(unknown)}"


def test_infrastructure_services_have_healthchecks(compose: dict) -> None:
    services = compose["services"]
    assert services["kafka"]["image"].startswith("apache/kafka:3.9")
    assert services["redis"]["image"].startswith("redis:7")
    for name in ("kafka", "redis"):
        assert services[name]["healthcheck"]["test"], name
    assert services["topics"]["command"] == ["anonstream", "topics", "create"]


def test_dockerfile_copies_every_package_dir_of_pyproject() -> None:
    """`pip install .` in the image needs every package-dir of pyproject.toml copied."""
    with (ROOT / "pyproject.toml").open("rb") as f:
        package_dirs = tomllib.load(f)["tool"]["setuptools"]["package-dir"].values()
    copied = set()
    for line in DOCKERFILE.read_text().splitlines():
        if line.startswith("COPY "):
            copied.update(part.rstrip("/") for part in line.split()[1:-1])
    roots = {d.rstrip("/") for d in package_dirs}
    uncovered = [d for d in roots if not any(d == c or d.startswith(c + "/") for c in copied)]
    assert not uncovered, f"deploy/Dockerfile does not COPY {uncovered}"
    assert {"pyproject.toml", "README.md"} <= copied


def test_dockerfile_builds_the_embedding_caches_make_setup_builds() -> None:
    """Every embedding file `make setup` prebuilds (`python -m anonstream.embedding.<backend>`) is built in the
    image too, into a cache directory set in the image's environment (so a container never distills or exports at
    its first start)."""
    makefile = (ROOT / "Makefile").read_text()
    dockerfile = DOCKERFILE.read_text()
    modules = set(re.findall(r"python -m (anonstream\.embedding\.\w+)", makefile))
    assert {"anonstream.embedding.static", "anonstream.embedding.onnx"} <= modules
    for module in modules:
        assert f"python -m {module}" in dockerfile, f"deploy/Dockerfile does not build {module}"
    for variable in ("ANONSTREAM_STATIC_CACHE", "ANONSTREAM_ONNX_CACHE"):
        assert re.search(rf"^(ENV |\s+){variable}=/\S+", dockerfile, re.M), f"{variable} not set in the image"
    build = dockerfile.index("python -m anonstream.embedding.static")
    assert dockerfile.index("ANONSTREAM_STATIC_CACHE=") < build < dockerfile.index("USER anonstream")


def test_there_are_deploy_scripts() -> None:
    names = {p.name for p in SCRIPTS}
    assert {"infra.sh", "kafka-local.sh", "redis-local.sh"} <= names


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_shell_script_syntax(script: Path) -> None:
    result = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr


def test_stages_serve_metrics_and_prometheus_scrapes_them(compose: dict) -> None:
    services = compose["services"]
    for stage in STAGES:
        env = services[stage]["environment"]
        assert env["ANONSTREAM_METRICS_PORT"] == "9464" and env["ANONSTREAM_METRICS_HOST"] == "0.0.0.0"
        assert "/healthz" in " ".join(services[stage]["healthcheck"]["test"])
    prometheus = services["prometheus"]
    assert prometheus["profiles"] == ["monitoring"]
    config = yaml.safe_load((COMPOSE.parent / "prometheus" / "prometheus.yml").read_text())
    targets = config["scrape_configs"][0]["static_configs"][0]["targets"]
    assert sorted(targets) == sorted(f"{stage}:9464" for stage in STAGES)


def test_the_audit_dashboard_scrapes_every_other_stage(compose: dict) -> None:
    env = compose["services"]["audit"]["environment"]
    assert env["ANONSTREAM_DASHBOARD_SCRAPE"].split(",") == [f"{stage}:9464" for stage in STAGES if stage != "audit"]
    assert env["ANONSTREAM_PSEUDONYM_KEY"] and env["ANONSTREAM_BOOTSTRAP"] == "kafka:9092"  # the shared env kept
