"""The files in deploy/ agree with the server and with each other.

compose.yaml and kubernetes.yaml cannot be run here (no container engine, no cluster),
so what can be checked without them is checked: every GIANTS_* setting they (and the
Dockerfile and systemd unit) set is one `giants serve` reads, with a value it accepts;
the image, port and health path are the same everywhere; the proxy's defaults name the
compose services. Read as text: no YAML parser is a dependency of the project.
"""

from __future__ import annotations

import re
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
    assert re.search(r"^\s+image: giants-table:latest", compose, re.MULTILINE)
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
    [proxy_ip] = re.findall(r"ipv4_address: ([\d.]+)", compose)
    assert settings_in("compose.yaml")["GIANTS_TRUSTED_PROXIES"] == proxy_ip
    [subnet] = re.findall(r"subnet: ([\d.]+)/24", compose)
    assert proxy_ip.rsplit(".", 1)[0] == subnet.rsplit(".", 1)[0]
    assert "option forwardfor" in (DEPLOY / "haproxy.cfg").read_text()
