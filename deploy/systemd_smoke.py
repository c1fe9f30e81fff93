"""End-to-end check of deploy/giants.service under a real systemd (in systemd-nspawn).

    sudo python deploy/systemd_smoke.py                 # Debian 12 tree in /var/tmp/giants-systemd
    sudo python deploy/systemd_smoke.py --keep          # leave the machine running afterwards

For a machine without systemd as its init (a container, a CI runner): it builds a
Debian 12 tree with debootstrap (systemd, Python 3.11; once, then reused), installs
this checkout's committed tree into /opt/giants-table/venv and the unit into
/etc/systemd/system exactly as the unit's header says (with one drop-in: the port,
default 18765, on 127.0.0.1), boots the tree with `systemd-nspawn --boot` on the
host's network, and then, from the host:

1. waits for /healthz (the unit was enabled: systemd started it at boot);
2. two players play (client_cli, as in deploy/smoke.py); the server's main process
   is killed (SIGKILL, `systemctl kill --kill-whom=main`): systemd restarts it
   (`Restart=on-failure`), the players' clients reconnect and play on, and the room's
   stored log holds every acknowledged move once, in order;
3. `systemctl stop giants`: how long the stop takes, and that the unit ends with
   `Result=success` (SIGTERM handled, the embedded Redis stopped by the server);
4. `journalctl -u giants` holds no traceback; the machine is powered off.

Needs root, debootstrap and systemd-container (`apt-get install debootstrap
systemd-container`); the host's pip configuration and CA bundle are copied into the
tree for the install. Not part of the test suite (it installs a distribution: a few
minutes the first time). docs/operations.md, "Deployment files", has its figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from smoke import Game, http_health, log  # noqa: E402

PACKAGES = "systemd,systemd-sysv,dbus,python3,python3-venv,ca-certificates,passwd"
PIP_FILES = ("/etc/pip.conf", "/etc/xdg/pip/pip.conf", "/etc/xdg/pip/constraints.txt")


def run(*cmd: str, check: bool = True, quiet: bool = False) -> subprocess.CompletedProcess[str]:
    if not quiet:
        log("$ " + " ".join(cmd))
    return subprocess.run(cmd, check=check, capture_output=True, text=True)


class Machine:
    """The booted tree: commands run inside it through nsenter into its PID 1's namespaces."""

    def __init__(self, root: Path, name: str) -> None:
        self.root, self.name = root, name
        self.proc: subprocess.Popen[bytes] | None = None
        self.leader = 0

    def prepare(self, mirror: str, port: int) -> None:
        if not (self.root / "usr/bin/systemctl").exists():
            shutil.rmtree(self.root, ignore_errors=True)
            run("debootstrap", "--variant=minbase", f"--include={PACKAGES}", "bookworm", str(self.root), mirror)
        for name in (*PIP_FILES, "/etc/ssl/certs/ca-certificates.crt"):
            if os.path.exists(name):
                target = self.root / name.lstrip("/")
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(name, target)
        # The checkout's committed tree, as `pip install` from a release would see it.
        src = self.root / "opt/giants-table/src"
        shutil.rmtree(src, ignore_errors=True)
        src.mkdir(parents=True)
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", "HEAD"], check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
        self.chroot("sh", "-c", "id giants >/dev/null 2>&1 || useradd --system --no-create-home giants")
        self.chroot("sh", "-c", "test -x /opt/giants-table/venv/bin/python || python3 -m venv /opt/giants-table/venv")
        self.chroot("/opt/giants-table/venv/bin/pip", "install", "-q", "--no-cache-dir", "/opt/giants-table/src[speed]")
        unit_dir = self.root / "etc/systemd/system"
        shutil.copy(ROOT / "deploy/giants.service", unit_dir / "giants.service")
        (unit_dir / "giants.service.d").mkdir(exist_ok=True)
        (unit_dir / "giants.service.d/smoke.conf").write_text(
            f"[Service]\nEnvironment=GIANTS_HOST=127.0.0.1\nEnvironment=GIANTS_PORT={port}\n")
        self.chroot("systemctl", "enable", "giants.service")

    def chroot(self, *cmd: str) -> None:
        """A command in the tree, not booted (install steps)."""
        done = run("systemd-nspawn", "-q", "--register=no", "--keep-unit", "-D", str(self.root), *cmd, check=False)
        if done.returncode:
            raise SystemExit(f"{' '.join(cmd)} failed in the tree:\n{done.stdout}{done.stderr}")

    def boot(self, console: Path) -> None:
        out = console.open("wb")
        self.proc = subprocess.Popen(
            ["systemd-nspawn", "-q", "--register=no", "--keep-unit", "--boot", "--console=pipe", "-M", self.name, "-D", str(self.root)],
            stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
        end = time.monotonic() + 60
        while time.monotonic() < end and not self.leader:
            children = run("ps", "-o", "pid=", "--ppid", str(self.proc.pid), check=False, quiet=True).stdout.split()
            self.leader = int(children[0]) if children else 0
            time.sleep(0.2)
        if not self.leader:
            raise SystemExit(f"the machine did not boot; its console: {console}")

    def inside(self, *cmd: str, check: bool = True) -> str:
        done = run("nsenter", "-t", str(self.leader), "-m", "-u", "-i", "-p", *cmd, check=False, quiet=True)
        if check and done.returncode:
            raise SystemExit(f"{' '.join(cmd)}: {done.stdout}{done.stderr}")
        return done.stdout

    def unit(self, *props: str) -> dict[str, str]:
        out = self.inside("systemctl", "show", "giants", "-p", ",".join(props))
        return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)

    def poweroff(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.inside("systemctl", "poweroff", check=False)
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


async def healthy(http: str, within: float) -> float:
    """Seconds until /healthz answered ok."""
    began = time.monotonic()
    while time.monotonic() - began < within:
        body = await asyncio.to_thread(http_health, http + "/healthz")
        if body is not None and body.get("status") == "ok":
            return time.monotonic() - began
        await asyncio.sleep(0.1)
    raise SystemExit(f"/healthz did not answer ok within {within:.0f} s")


async def check(machine: Machine, port: int, seed: int) -> dict[str, Any]:
    url, http = f"ws://127.0.0.1:{port}", f"http://127.0.0.1:{port}"
    since = int(time.time())
    # From the boot (first round) or `systemctl start` (later ones) to /healthz ok.
    result: dict[str, Any] = {"start_to_healthy_s": round(await healthy(http, 120), 2)}
    game = Game(url, random.Random(seed))
    await game.start()
    for _ in range(6):
        await game.move()
    first = machine.unit("MainPID", "NRestarts")
    issued = time.monotonic()
    machine.inside("systemctl", "kill", "--kill-whom=main", "--signal=SIGKILL", "giants")
    healthy_at = 0.0

    async def restarted() -> None:  # RestartSec, then the server's own start
        nonlocal healthy_at
        await healthy(http, 60)
        healthy_at = time.monotonic()

    back = asyncio.ensure_future(restarted())
    await game.move()  # the clients reconnect to the restarted server
    result["kill_to_first_move_s"] = round(time.monotonic() - issued, 2)
    await back
    result["kill_to_healthy_s"] = round(healthy_at - issued, 2)
    after = machine.unit("MainPID", "NRestarts")
    result["restarted"] = after["MainPID"] != first["MainPID"] and int(after["NRestarts"]) == int(first["NRestarts"]) + 1
    for _ in range(5):
        await game.move()
    stored = await game.finish()
    result.update(moves=len(game.acked), log_matches=stored == game.acked, errors=game.errors,
                  reconnects=[p.reconnects for p in game.players])
    await game.close()
    if stored != game.acked:
        raise SystemExit(f"stored log {stored}\n != acknowledged {game.acked}")
    if not result["restarted"]:
        raise SystemExit(f"systemd did not restart the server once: {first} -> {after}")

    began = time.monotonic()
    machine.inside("systemctl", "stop", "giants")
    result["stop_s"] = round(time.monotonic() - began, 2)
    state = machine.unit("Result", "ExecMainStatus", "ActiveState")
    result["after_stop"] = state
    journal = machine.inside("journalctl", "-u", "giants", "--since", f"@{since}", "--no-pager", "-o", "cat")
    result["journal_lines"] = len(journal.splitlines())
    result["tracebacks"] = journal.count("Traceback")
    warnings = [line for line in journal.splitlines() if "WARNING" in line or "ERROR" in line]
    log("journal, WARNING and above:" + "".join(f"\n    {line}" for line in warnings[-20:]))
    if state.get("Result") != "success" or result["tracebacks"]:
        raise SystemExit(f"the stop was not clean: {state}, {result['tracebacks']} tracebacks\n{journal[-3000:]}")
    return result


def main(args: argparse.Namespace) -> int:
    if os.geteuid() != 0:
        raise SystemExit("run as root (debootstrap and systemd-nspawn need it)")
    root = Path(args.work) / "rootfs"
    machine = Machine(root, "giants-smoke")
    started = time.monotonic()
    machine.prepare(args.mirror, args.port)
    log(f"tree ready in {time.monotonic() - started:.0f} s")
    console = Path(args.work) / "console.log"
    machine.boot(console)
    try:
        results = [asyncio.run(check(machine, args.port, seed)) for seed in range(1, 2)]
        if args.rounds > 1:
            for seed in range(2, args.rounds + 1):
                machine.inside("systemctl", "start", "giants")
                results.append(asyncio.run(check(machine, args.port, seed)))
    finally:
        if not args.keep:
            machine.poweroff()
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", default="/var/tmp/giants-systemd", help="where the Debian tree and the console log go")
    parser.add_argument("--mirror", default="http://deb.debian.org/debian")
    parser.add_argument("--port", type=int, default=18765)
    parser.add_argument("--rounds", type=int, default=1, help="how many times to play, kill and stop")
    parser.add_argument("--keep", action="store_true", help="leave the machine running")
    sys.exit(main(parser.parse_args()))
