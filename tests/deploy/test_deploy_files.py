"""The files in deploy/ agree with the server and with each other.

The image and compose.yaml are run for real by deploy/smoke.py (a container engine and
minutes: not part of this suite; docs/operations.md, "Deployment files"); kubernetes.yaml
has no cluster here. What can be checked without them is checked: every GIANTS_* setting
they (and the Dockerfile and systemd unit) set is one `giants serve` reads, with a value
it accepts; the image, port and health path are the same everywhere; the proxy's
defaults name the compose services; the images' defaults are the official ones. Read as
text: no YAML parser is a dependency of the project.
"""

from __future__ import annotations

import ipaddress
import re
import runpy
import subprocess
from dataclasses import fields
from pathlib import Path

import pytest

from server.config import Config

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
SETTINGS = {"GIANTS_" + f.name.upper() for f in fields(Config)}

# name: value as each file writes it (commented-out lines too: an operator uncomments them)
PATTERNS = {
    "compose.yaml": r"^[ #]*(GIANTS_[A-Z_]+):\s*\"?([^\"\s#]*)",
    "kubernetes.yaml": r"name: (GIANTS_[A-Z_]+)(?:, value: \"([^\"]*)\")?",
    "Dockerfile": r"(GIANTS_[A-Z_]+)=(\S*)",
    "giants.service": r"Environment=(GIANTS_[A-Z_]+)=(\S*)",
}


def settings_in(name: str) -> dict[str, str]:
    text = (DEPLOY / name).read_text()
    return {m.group(1): m.group(2) or "" for m in re.finditer(PATTERNS[name], text, re.MULTILINE)}


@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_every_setting_is_one_the_server_reads_with_a_valid_value(name: str) -> None:
    found = settings_in(name)
    assert found, f"no GIANTS_ settings found in deploy/{name}"
    assert set(found) <= SETTINGS, f"deploy/{name} sets unknown settings: {sorted(set(found) - SETTINGS)}"
    Config.from_args(env={k: v for k, v in found.items() if v}).validate()  # raises on a bad value


def test_compose_and_kubernetes_run_the_same_image_port_health_and_settings() -> None:
    compose = (DEPLOY / "compose.yaml").read_text()
    kube = (DEPLOY / "kubernetes.yaml").read_text()
    docker = (DEPLOY / "Dockerfile").read_text()
    haproxy = (DEPLOY / "haproxy.cfg").read_text()
    assert re.search(r"^\s+image: \$\{GIANTS_IMAGE:-giants-table:latest\}", compose, re.MULTILINE)
    assert re.search(r"^\s+image: giants-table:latest", kube, re.MULTILINE)
    # One port everywhere: the image listens on 8765, compose's proxy reaches the nodes
    # there, Kubernetes probes and serves it.
    assert "GIANTS_PORT=8765" in docker and "EXPOSE 8765" in docker
    assert [f"node{i}:8765" for i in (1, 2, 3)] == re.findall(r"NODE\d_ADDR-(node\d:\d+)", haproxy)
    assert re.findall(r"^  (node\d):", compose, re.MULTILINE) == ["node1", "node2", "node3"]
    assert "containerPort: 8765" in kube and "port: 8765, targetPort: 8765" in kube
    assert '"${PROXY_BIND-:8765}"' in haproxy and '"8765:8765"' in compose
    # Health: the path the proxy, the probes and the image's HEALTHCHECK ask for.
    assert "uri /healthz" in haproxy
    assert kube.count("httpGet: {path: /healthz, port: 8765}") == 2
    assert "127.0.0.1:8765/healthz" in docker
    # Settings both deployments give their nodes agree.
    both = {"GIANTS_REDIS_URL", "GIANTS_LEASE_TTL"}
    compose_env, kube_env = settings_in("compose.yaml"), settings_in("kubernetes.yaml")
    assert compose_env["GIANTS_LEASE_TTL"] == kube_env["GIANTS_LEASE_TTL"]
    assert both <= set(compose_env) and both <= set(kube_env)
    assert "GIANTS_NODE_ID" in kube_env and compose.count("GIANTS_NODE_ID: node") == 3


def test_compose_trusts_exactly_the_proxy_address_it_gives_haproxy() -> None:
    compose = (DEPLOY / "compose.yaml").read_text()
    fixed = dict(re.findall(r"^  (\w+):\n(?:    .*\n)*?        ipv4_address: ([\d.]+)", compose, re.MULTILINE))
    assert sorted(fixed) == ["proxy", "redis"]
    assert settings_in("compose.yaml")["GIANTS_TRUSTED_PROXIES"] == fixed["proxy"]
    [subnet] = re.findall(r"subnet: ([\d.]+)/24", compose)
    # Other containers get addresses only from ip_range: never a fixed one (a node that
    # took the proxy's on a restart kept the proxy from starting, seen with podman).
    [pool] = re.findall(r"ip_range: ([\d./]+)", compose)
    assert ipaddress.ip_network(pool).subnet_of(ipaddress.ip_network(f"{subnet}/24"))
    for address in fixed.values():
        assert ipaddress.ip_address(address) in ipaddress.ip_network(f"{subnet}/24")
        assert ipaddress.ip_address(address) not in ipaddress.ip_network(pool)
    assert "option forwardfor" in (DEPLOY / "haproxy.cfg").read_text()


def test_compose_nodes_reach_redis_by_its_fixed_address_not_a_name_lookup() -> None:
    """A name lookup caught while podman's DNS reloads (a container joining or leaving
    the network) waited the resolver's 5 s timeout: the nodes' Redis connect stalled
    5 s (docs/operations.md, "Deployment files"). The URL names Redis' own address."""
    compose = (DEPLOY / "compose.yaml").read_text()
    [redis_ip] = re.findall(r"^  redis:\n(?:    .*\n)*?        ipv4_address: ([\d.]+)", compose, re.MULTILINE)
    assert settings_in("compose.yaml")["GIANTS_REDIS_URL"] == f"redis://{redis_ip}:6379/0"


def test_images_default_to_the_official_ones_and_can_be_swapped() -> None:
    """A plain `docker compose up` pulls the official images; each can be replaced
    through the environment (deploy/local-bases.sh's Debian-built ones, a mirror)."""
    compose = (DEPLOY / "compose.yaml").read_text()
    docker = (DEPLOY / "Dockerfile").read_text()
    assert "ARG BASE_IMAGE=python:3.11-slim\nFROM ${BASE_IMAGE}" in docker
    assert "BASE_IMAGE: ${BASE_IMAGE:-python:3.11-slim}" in compose
    images = re.findall(r"^\s+image: (\S+)", compose, re.MULTILINE)
    assert sorted(images) == sorted(
        ["${GIANTS_IMAGE:-giants-table:latest}", "${REDIS_IMAGE:-redis:7-alpine}", "${PROXY_IMAGE:-haproxy:2.9-alpine}"]
    )
    assert "nofile: ${PROXY_NOFILE:-65536}" in compose


def test_smoke_script_and_local_bases_name_the_same_services_and_images() -> None:
    """deploy/smoke.py drives the compose services by name and points compose at the
    images deploy/local-bases.sh builds (both are run by hand: docs/operations.md)."""
    smoke = runpy.run_path(str(DEPLOY / "smoke.py"), run_name="deploy_smoke")  # its names, nothing run
    compose = (DEPLOY / "compose.yaml").read_text()
    assert list(smoke["NODES"]) == re.findall(r"^  (node\d):", compose, re.MULTILINE)
    bases = (DEPLOY / "local-bases.sh").read_text()
    built = set(re.findall(r"^build (\w+) ", bases, re.MULTILINE))
    assert {image.split("/")[1].split(":")[0].removeprefix("giants-base-") for image in smoke["LOCAL_BASES"].values()} == built
    for name in smoke["LOCAL_BASES"]:
        assert "${" + name + ":-" in compose
    assert subprocess.run(["sh", "-n", str(DEPLOY / "local-bases.sh")]).returncode == 0


def test_dockerignore_sends_the_build_what_the_dockerfile_copies_and_nothing_else() -> None:
    """The build context is the repository root: without .dockerignore Docker sent all of
    it (380 MB with a .venv) to the daemon for every build; with it, 1.5 MB."""
    root = DEPLOY.parent
    docker = (DEPLOY / "Dockerfile").read_text()
    copied = {src for line in re.findall(r"^COPY (.+)$", docker, re.MULTILINE) for src in line.split()[:-1]}
    assert copied == {"pyproject.toml", "README.md", "engines", "protocol", "server", "client_cli"}
    lines = [line for line in (root / ".dockerignore").read_text().splitlines() if line and not line.startswith("#")]
    assert lines[0] == "*"  # everything out, then back in: only what is named below
    assert {line[1:] for line in lines if line.startswith("!")} == copied
    assert all((root / src).exists() for src in copied)


def test_local_bases_give_docker_import_only_changes_it_takes() -> None:
    """`docker import --change` takes CMD, ENTRYPOINT, ENV, EXPOSE, ONBUILD, USER, VOLUME
    and WORKDIR (Docker 20.10 refused STOPSIGNAL: "stopsignal is not a valid change
    command"; podman's takes it): the HAProxy base gets its STOPSIGNAL by a build on top."""
    bases = (DEPLOY / "local-bases.sh").read_text()
    changes = re.findall(r"--change '(\w+) ", bases)
    assert changes and set(changes) <= {"CMD", "ENTRYPOINT", "ENV", "EXPOSE", "ONBUILD", "USER", "VOLUME", "WORKDIR"}
    assert "STOPSIGNAL SIGUSR1" in bases


def test_smoke_script_falls_back_to_the_compose_that_is_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Compose v2 is a Docker CLI plugin (`docker compose`); Debian 12 packages only the
    standalone v1 (`docker-compose`), so the smoke script uses that when no plugin answers."""
    smoke = runpy.run_path(str(DEPLOY / "smoke.py"), run_name="deploy_smoke")
    default_compose = smoke["default_compose"]
    installed: set[str] = set()
    monkeypatch.setattr("shutil.which", lambda name: f"/usr/bin/{name}" if name in installed else None)
    for plugin, expected in ((True, ["docker", "compose"]), (False, ["docker-compose"])):
        default_compose.__globals__["has_compose_plugin"] = lambda plugin=plugin: plugin
        installed = {"docker", "docker-compose"}
        assert default_compose("docker") == expected
    installed = {"docker"}  # no v1 either: `docker compose`, which then says what is missing
    assert default_compose("docker") == ["docker", "compose"]
    installed = {"podman", "podman-compose"}
    assert default_compose("podman") == ["podman-compose"]
    installed = {"podman"}
    assert default_compose("podman") == ["podman", "compose"]
