"""What `--replica-acks 1` costs per move: bench/server.py against a Redis master with
one replica (both started here from the redis-server binary, on loopback), with the
server's replica acks off and on, alternating.

    python bench/replica_acks.py --rounds 2 -- --rooms 100 --rate 1000 --duration 10 \
        --memory-conns 0 --knee '' --no-floor
    python bench/replica_acks.py --rounds 1 -- --callgrind --rooms 10 --rate 20 \
        --duration 20 --memory-conns 0 --knee '' --no-floor

Everything after `--` goes to bench/server.py (its `--redis-url` is set here). The
figures to compare are its "round trip", "CPU per move" (server and redis-server) and
"instructions" lines, printed per run.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import redis

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.server.cluster import _cluster_ports, redis_server_binary  # noqa: E402

SHOWN = ("at ", "round trip", "CPU per move", "instructions", "Redis pipeline", "knee")


def start_pair(directory: Path) -> tuple[list[subprocess.Popen[bytes]], int]:
    """A master and its replica (no persistence: the replica is the copy); the master's port."""
    binary = redis_server_binary()
    master, replica = _cluster_ports(2)
    procs = []
    for port, extra in ((master, []), (replica, ["--replicaof", "127.0.0.1", str(master)])):
        node_dir = directory / str(port)
        node_dir.mkdir()
        procs.append(subprocess.Popen(
            [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(node_dir), "--save", "",
             "--appendonly", "no", "--logfile", str(node_dir / "redis.log"), *extra],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    client = redis.Redis(port=replica)
    end = time.monotonic() + 30
    while True:
        try:
            if client.info("replication").get("master_link_status") == "up":
                break
        except redis.ConnectionError:
            pass
        if time.monotonic() > end:
            raise RuntimeError("the replica did not connect")
        time.sleep(0.1)
    client.close()
    return procs, master


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2, help="off/on pairs")
    parser.add_argument("--acks", default="0,1", help="replica acks values tried in each round")
    parser.add_argument("--timeout", default="1", help="the server's --replica-ack-timeout")
    parser.add_argument("rest", nargs=argparse.REMAINDER, help="-- then bench/server.py's arguments")
    args = parser.parse_args()
    rest = args.rest[1:] if args.rest[:1] == ["--"] else args.rest
    with tempfile.TemporaryDirectory() as tmp:
        procs, master = start_pair(Path(tmp))
        try:
            for round_no in range(args.rounds):
                for acks in args.acks.split(","):
                    env = {**os.environ, "GIANTS_REPLICA_ACKS": acks, "GIANTS_REPLICA_ACK_TIMEOUT": args.timeout}
                    out = subprocess.run(
                        [sys.executable, str(ROOT / "bench" / "server.py"), "--redis-url",
                         f"redis://127.0.0.1:{master}", *rest],
                        env=env, cwd=ROOT, capture_output=True, text=True, check=False)
                    print(f"== round {round_no + 1}, --replica-acks {acks}", flush=True)
                    lines = [line for line in out.stdout.splitlines() if line.startswith(SHOWN)]
                    print("\n".join(lines) or out.stdout[-2000:] + out.stderr[-2000:], flush=True)
        finally:
            for proc in procs:
                proc.terminate()
                proc.wait(10)


if __name__ == "__main__":
    main()
