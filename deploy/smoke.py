"""End-to-end check of deploy/compose.yaml on a real container engine (docker or podman).

    python deploy/smoke.py                      # docker compose (or docker-compose), Docker Hub images
    python deploy/smoke.py --engine podman      # podman-compose (or `--compose "podman compose"`)
    python deploy/smoke.py --engine podman --local-bases   # bases from deploy/local-bases.sh

Run it from a checkout with the project installed (it plays through client_cli). It
starts the compose file as its own project (`giants-smoke`: its own containers,
network and Redis volume), then, through the proxy only (ws://127.0.0.1:8765):

1. /healthz answers from all three nodes;
2. two players play a game; the node owning the room is killed (SIGKILL); the game goes
   on after failover, and the room's stored log (replay) holds every acknowledged
   move, once, in order;
3. the killed node is started again; a second game; the owner is stopped (SIGTERM,
   a rolling restart): it hands the room over and exits 0, nobody gets internal_error,
   every acknowledged move is stored;
4. the project is removed (`down -v`; --keep leaves it running).

With --one it checks the image alone instead, as the Dockerfile's header runs it (one
node, its embedded Redis in a volume, published on --port): it builds the image, runs
it, waits for /healthz and for the engine's own health status (Docker; podman without
systemd runs no health checks), plays 6 moves, stops the container (exit code 0), starts
it again and plays on: the room must come back from the volume with every acknowledged
move, in order. Its container and volume are removed at the end (--keep leaves them).

It prints what it measured (time from the kill to the first move acknowledged after
it, how long the stop took, the exit codes, the reconnects, every error code a player
got) and exits non-zero on any failure. Not part of
the test suite: it builds an image and runs containers (a few minutes).
docs/operations.md, "Deployment files", has the figures of the runs so far.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shlex
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from client_cli.client import Client, ConnectionLost, RequestFailed, TrackedRoom  # noqa: E402
from protocol import ErrorCode  # noqa: E402

NODES = ("node1", "node2", "node3")  # compose services = GIANTS_NODE_ID of each
LOCAL_BASES = {
    "BASE_IMAGE": "localhost/giants-base-python:bookworm",
    "REDIS_IMAGE": "localhost/giants-base-redis:bookworm",
    "PROXY_IMAGE": "localhost/giants-base-haproxy:bookworm",
}
HEALTH = (
    "import urllib.request; "
    "print(urllib.request.urlopen('http://127.0.0.1:8765/healthz', timeout=5).read().decode())"
)


def log(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", flush=True)


def default_compose(engine: str) -> list[str]:
    """podman-compose, else `podman compose`; `docker compose` (Compose v2, a CLI plugin),
    else the standalone `docker-compose` (Debian 12 packages only Compose v1 1.29, which
    installs no plugin)."""
    if engine == "podman":
        return ["podman-compose"] if shutil.which("podman-compose") else ["podman", "compose"]
    if shutil.which("docker-compose") and not has_compose_plugin():
        return ["docker-compose"]
    return ["docker", "compose"]


def has_compose_plugin() -> bool:
    try:
        return subprocess.run(["docker", "compose", "version"], capture_output=True).returncode == 0
    except OSError:
        return False


class Compose:
    """The compose command for this project, and the engine behind it."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.engine = args.engine
        base = shlex.split(args.compose) if args.compose else default_compose(self.engine)
        self.base = base
        files = ["-f", str(ROOT / "deploy" / "compose.yaml")]
        for extra in args.file:
            files += ["-f", extra]
        self.project = args.project
        self.cmd = [*base, "-p", args.project, *files]
        self.env = dict(os.environ)
        if args.local_bases:
            for name, image in LOCAL_BASES.items():
                self.env.setdefault(name, image)
        if self.engine == "podman":
            self.env.setdefault("BUILDAH_FORMAT", "docker")  # keep the Dockerfile's HEALTHCHECK

    def run(self, *args: str, check: bool = True, quiet: bool = False) -> str:
        done = subprocess.run([*self.cmd, *args], env=self.env, capture_output=True, text=True)
        if check and done.returncode != 0:
            raise SystemExit(f"{shlex.join([*self.cmd, *args])} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
        if not quiet:
            log(f"{' '.join(args)}: rc {done.returncode}")
        return done.stdout

    def container(self, service: str) -> str:
        """The id of the service's container (compose labels it, docker's and podman's alike)."""
        labels = [f"label=com.docker.compose.{k}" for k in (f"project={self.project}", f"service={service}")]
        done = subprocess.run(
            [self.engine, "ps", "-a", "-q", "--filter", labels[0], "--filter", labels[1]],
            capture_output=True, text=True, check=True,
        )
        [found] = done.stdout.split()
        return found

    def signal(self, how: str, container: str) -> None:
        """`kill` (SIGKILL) or `stop` (SIGTERM, 20 s grace) a container."""
        args = ["kill", "-s", "KILL"] if how == "kill" else ["stop", "-t", "20"]
        subprocess.run([self.engine, *args, container], capture_output=True, check=True)

    def exit_code(self, container: str) -> int:
        """The exit code of a container that has stopped (137: SIGKILL; 0: a clean stop)."""
        done = subprocess.run(
            [self.engine, "inspect", "--format", "{{.State.ExitCode}}", container],
            capture_output=True, text=True, check=True,
        )
        return int(done.stdout.strip())

    def health(self, node: str) -> dict[str, Any] | None:
        """The node's own /healthz, asked inside its container (None: no answer)."""
        done = subprocess.run(
            [self.engine, "exec", self.container(node), "python", "-c", HEALTH],
            capture_output=True, text=True, timeout=60,
        )
        try:
            body: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
        except (IndexError, ValueError):
            return None
        return body


def http_health(url: str) -> dict[str, Any] | None:
    try:
        with urllib.request.urlopen(url, timeout=5) as reply:
            body: dict[str, Any] = json.loads(reply.read())
            return body
    except (OSError, ValueError):
        return None


async def nodes_behind_proxy(http: str, within: float = 180.0) -> dict[str, dict[str, Any]]:
    """/healthz through the proxy until every node answered healthy once."""
    seen: dict[str, dict[str, Any]] = {}
    end = time.monotonic() + within
    while time.monotonic() < end:
        body = await asyncio.to_thread(http_health, http + "/healthz")
        if body is not None and body.get("status") == "ok":
            seen[str(body["node"])] = body
            if set(seen) >= set(NODES):
                return seen
        await asyncio.sleep(0.2)
    raise SystemExit(f"the proxy's /healthz showed only {sorted(seen)} within {within:.0f} s")


@dataclass
class Game:
    """Two players through the proxy; every move acknowledged, and every error seen."""

    url: str
    rng: random.Random
    acked: list[tuple[int, str]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    players: list[Client] = field(default_factory=list)
    room: str = ""

    async def start(self) -> None:
        alice = Client(self.url, name="alice", request_timeout=60.0)
        bob = Client(self.url, name="bob", request_timeout=60.0)
        await alice.connect()
        await bob.connect()
        self.players = [alice, bob]
        self.room = str((await alice.create_room("giantslayer"))["room"])
        await alice.join(self.room)
        await bob.join(self.room)
        await bob.room(self.room).wait_for(lambda r: r.status == "playing", timeout=30)

    def tracked(self, player: Client) -> TrackedRoom:
        return player.room(self.room)

    async def move(self) -> float:
        """One move by whoever is to act; returns when it was acknowledged (monotonic)."""
        while True:
            if self.tracked(self.players[0]).finished:
                raise SystemExit(f"the game ended after {len(self.acked)} moves: use another seed")
            for player in self.players:
                copy = self.tracked(player)
                if copy.my_turn:
                    action = self.rng.choice(copy.legal)
                    assert copy.seat is not None
                    try:
                        await player.act(self.room, action, guard=True)
                    except (ConnectionLost, RequestFailed) as exc:
                        code = getattr(exc, "code", "connection_lost")
                        self.errors.append(f"{player.name}: {code}")
                        if code == ErrorCode.STALE_VERSION or isinstance(exc, ConnectionLost):
                            await asyncio.sleep(0.1)  # the view catches up; look again
                            break
                        if code in (ErrorCode.INTERNAL_ERROR, ErrorCode.STORAGE_UNAVAILABLE):
                            await asyncio.sleep(0.2)
                            break
                        raise SystemExit(f"{player.name}'s move {action} after {len(self.acked)} moves: {exc}") from exc
                    self.acked.append((copy.seat, action))
                    return time.monotonic()
            else:
                # wait_for checks at once, so a change that came meanwhile is not missed
                # (a resumed seat's snapshot can make it our turn at the same version).
                waits = [
                    asyncio.ensure_future(self.tracked(p).wait_for(lambda r: r.my_turn or r.finished, timeout=60))
                    for p in self.players
                ]
                await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
                for wait in waits:
                    wait.cancel()

    async def finish(self) -> list[tuple[int, str]]:
        """Resign (so the room is finished) and return its stored log of actions."""
        alice, bob = self.players
        await alice.resign(self.room)
        await bob.room(self.room).wait_finished(timeout=30)
        replay = await bob.replay(self.room)
        return [(int(a["seat"]), str(a["action"])) for a in replay["actions"] if "action" in a]

    async def close(self) -> None:
        for player in self.players:
            await player.close()


async def owner_of(compose: Compose, room_count: int) -> str:
    """The node holding a lease (each game's room is the only live one)."""
    for _ in range(30):
        leases = {n: (await asyncio.to_thread(compose.health, n) or {}).get("leases", 0) for n in NODES}
        owners = [n for n, count in leases.items() if count == room_count]
        if len(owners) == 1:
            return owners[0]
        await asyncio.sleep(1)
    raise SystemExit(f"no single owner of the room: leases {leases}")


async def failover(compose: Compose, url: str, http: str, how: str, seed: int) -> dict[str, Any]:
    """One game through the proxy with the room's owner killed (`kill`) or stopped (`stop`)."""
    game = Game(url, random.Random(seed))
    await game.start()
    for _ in range(6):
        await game.move()
    owner = await owner_of(compose, 1)
    reconnects = [p.reconnects for p in game.players]
    log(f"{how}: room {game.room} owned by {owner}, {len(game.acked)} moves acknowledged")
    result: dict[str, Any] = {"owner": owner}
    container = await asyncio.to_thread(compose.container, owner)
    issued = time.monotonic()
    if how == "kill":
        # Nothing in flight: a move sent at the instant of the kill may get internal_error
        # (docs/operations.md, "Failover"). The next move waits for the failover.
        await asyncio.to_thread(compose.signal, "kill", container)
        dead = time.monotonic()
        first = await game.move()
        result["kill_command_s"] = round(dead - issued, 2)
        # From the kill to the first move acknowledged after it: the failover as players see it.
        result["failover_s"] = round(first - issued, 2)
    else:
        # Moves go on while the owner shuts down: it hands the room over meanwhile.
        stopping = asyncio.ensure_future(asyncio.to_thread(compose.signal, "stop", container))
        during, slowest = 0, 0.0
        while not stopping.done():
            began = time.monotonic()
            slowest = max(slowest, await game.move() - began)
            during += 1
            await asyncio.sleep(0.2)  # a few moves a second, as people play
        await stopping
        # `stop` returns once the container has exited: its time is the node's shutdown.
        result["stop_command_s"] = round(time.monotonic() - issued, 2)
        result["moves_during_stop"] = during
        result["slowest_move_during_stop_s"] = round(slowest, 2)
    result["exit_code"] = await asyncio.to_thread(compose.exit_code, container)
    after = time.monotonic()
    for _ in range(5):
        await game.move()
    result["five_moves_after_s"] = round(time.monotonic() - after, 2)
    stored = await game.finish()
    result.update(
        moves=len(game.acked),
        reconnects=[p.reconnects - r for p, r in zip(game.players, reconnects, strict=True)],
        errors=game.errors,
        log_matches=stored == game.acked,
    )
    await game.close()
    log(f"{how}: {json.dumps(result)}")
    if stored != game.acked:
        raise SystemExit(f"{how}: stored log {stored}\n != acknowledged {game.acked}")
    if how == "stop" and any("internal_error" in e for e in game.errors):
        raise SystemExit(f"stop: internal_error during a graceful hand-over: {game.errors}")
    if how == "stop" and result["exit_code"] != 0:
        raise SystemExit(f"stop: the node exited with {result['exit_code']}, not 0")
    await asyncio.to_thread(compose.run, "start", owner)
    await nodes_behind_proxy(http)
    return result


async def one_container(args: argparse.Namespace) -> int:
    """The image alone: one node with its embedded Redis in a volume (see the docstring)."""
    engine, port = args.engine, args.port
    name, volume = f"{args.project}-one", f"{args.project}-one-data"
    image = os.environ.get("GIANTS_IMAGE", "giants-table:latest")

    def run(*cmd: str, check: bool = True) -> str:
        done = subprocess.run([engine, *cmd], capture_output=True, text=True)
        if check and done.returncode != 0:
            raise SystemExit(f"{engine} {shlex.join(cmd)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
        return done.stdout.strip()

    async def healthy(since: float) -> float | None:
        """Seconds from `since` until the engine reports the container healthy."""
        if engine == "podman":
            return None  # podman runs HEALTHCHECKs from systemd timers only
        while True:
            status = await asyncio.to_thread(run, "inspect", "--format", "{{.State.Health.Status}}", name)
            if status == "healthy":
                return round(time.monotonic() - since, 2)
            if time.monotonic() - since > 90:
                raise SystemExit(f"the container's health status is still {status!r} after 90 s")
            await asyncio.sleep(0.2)

    log(f"engine: {run('version', '--format', '{{.Client.Version}}')}")
    build = ["build", "-f", str(ROOT / "deploy" / "Dockerfile"), "-t", image]
    base = os.environ.get("BASE_IMAGE") or (LOCAL_BASES["BASE_IMAGE"] if args.local_bases else None)
    if base:
        build += ["--build-arg", f"BASE_IMAGE={base}"]
    if engine == "podman":
        build += ["--format", "docker"]  # keep the HEALTHCHECK
    began = time.monotonic()
    run(*build, str(ROOT))
    log(f"built {image} in {time.monotonic() - began:.0f} s")
    run("rm", "-f", name, check=False)
    run("volume", "rm", volume, check=False)
    settings = ["-e", f"GIANTS_WORKERS={args.workers}"] if args.workers else []
    began = time.monotonic()
    run("run", "-d", "--name", name, "-p", f"{port}:8765", "-v", f"{volume}:/data", *settings, image)
    result: dict[str, Any] = {}
    try:
        url, http = f"ws://127.0.0.1:{port}", f"http://127.0.0.1:{port}"
        while await asyncio.to_thread(http_health, http + "/healthz") is None:
            if time.monotonic() - began > 60:
                raise SystemExit("no /healthz within 60 s of `run`")
            await asyncio.sleep(0.1)
        result["healthz_after_run_s"] = round(time.monotonic() - began, 2)
        result["healthy_after_run_s"] = await healthy(began)
        game = Game(url, random.Random(1))
        await game.start()
        for _ in range(6):
            await game.move()
        issued = time.monotonic()
        await asyncio.to_thread(run, "stop", "-t", "20", name)  # the players' loop stays live
        result["stop_command_s"] = round(time.monotonic() - issued, 2)
        result["exit_code"] = int(run("inspect", "--format", "{{.State.ExitCode}}", name))
        issued = time.monotonic()
        await asyncio.to_thread(run, "start", name)
        result["first_move_after_start_s"] = round(await game.move() - issued, 2)
        for _ in range(5):
            await game.move()
        result["healthy_after_start_s"] = await healthy(issued)
        stored = await game.finish()
        result.update(
            moves=len(game.acked),
            reconnects=[p.reconnects for p in game.players],
            errors=game.errors,
            log_matches=stored == game.acked,
        )
        await game.close()
        log(f"one container: {json.dumps(result)}")
        if stored != game.acked:
            raise SystemExit(f"stored log {stored}\n != acknowledged {game.acked}")
        if result["exit_code"] != 0:
            raise SystemExit(f"the container exited with {result['exit_code']} on `stop`, not 0")
    finally:
        done = subprocess.run([engine, "logs", name], capture_output=True, text=True)
        lines = (done.stdout + done.stderr).splitlines()
        if sys.exc_info()[0] is None:
            lines = [line for line in lines if " WARNING " in line or " ERROR " in line or "Traceback" in line]
        log(f"{name}: {len(lines)} log lines" + "".join(f"\n    {line}" for line in lines[-30:]))
        if not args.keep:
            run("rm", "-f", name, check=False)
            run("volume", "rm", volume, check=False)
    print(json.dumps(result, indent=2))
    return 0


async def main(args: argparse.Namespace) -> int:
    compose = Compose(args)
    url, http = f"ws://127.0.0.1:{args.port}", f"http://127.0.0.1:{args.port}"
    log(f"compose: {shlex.join(compose.cmd)}")
    versions = subprocess.run([*compose.base, "version"], capture_output=True, text=True)
    log(f"compose version: {'; '.join(line.strip() for line in versions.stdout.splitlines()[:2])}")
    compose.run("down", "-v", check=False)
    started = time.monotonic()
    compose.run("up", "-d", "--build")
    results: dict[str, list[dict[str, Any]]] = {"kill": [], "stop": []}
    try:
        nodes = await nodes_behind_proxy(http)
        log(f"/healthz through the proxy: {sorted(nodes)} healthy, {time.monotonic() - started:.0f} s after `up`")
        for round_ in range(args.rounds):
            for how in ("kill", "stop"):
                results[how].append(await failover(compose, url, http, how, seed=10 * round_ + len(how)))
    finally:
        for node in NODES:  # what the nodes logged at WARNING and above (and INFO on a failure)
            done = subprocess.run([compose.engine, "logs", compose.container(node)], capture_output=True, text=True)
            lines = (done.stdout + done.stderr).splitlines()
            if sys.exc_info()[0] is None:
                lines = [line for line in lines if " WARNING " in line or " ERROR " in line or "Traceback" in line]
            log(f"{node}: {len(lines)} log lines" + "".join(f"\n    {line}" for line in lines[-30:]))
        if not args.keep:
            compose.run("down", "-v")
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--engine", choices=("docker", "podman"), default="docker")
    parser.add_argument(
        "--compose", help='the compose command (default: "docker compose", else docker-compose; podman-compose, else "podman compose")'
    )
    parser.add_argument("-f", "--file", action="append", default=[], help="another compose file to merge (repeatable)")
    parser.add_argument("--local-bases", action="store_true", help="use deploy/local-bases.sh's images (unless BASE_IMAGE, ... are set)")
    parser.add_argument("--project", default="giants-smoke")
    parser.add_argument("--port", type=int, default=8765, help="the proxy's published port (compose.yaml: 8765)")
    parser.add_argument("--rounds", type=int, default=1, help="how many times to kill and stop an owner")
    parser.add_argument("--keep", action="store_true", help="leave the project running")
    parser.add_argument("--one", action="store_true", help="check the image alone (docker run), not compose.yaml")
    parser.add_argument("--workers", help="with --one: the container's GIANTS_WORKERS (e.g. auto)")
    args = parser.parse_args()
    sys.exit(asyncio.run(one_container(args) if args.one else main(args)))
