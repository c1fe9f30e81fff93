"""`giants serve`: run the game server until SIGINT/SIGTERM.

Every flag has an environment variable (GIANTS_HOST, GIANTS_PORT, GIANTS_DATA_DIR,
GIANTS_REDIS_URL, GIANTS_LOG_LEVEL, ...); see docs/operations.md.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import socket
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from server.config import Config

    Config.add_arguments(parser)


async def _main(config: object) -> int:
    from server.app import GiantsServer
    from server.config import Config

    assert isinstance(config, Config)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    server = GiantsServer(config)
    try:
        await server.start(wait_restored=False)  # listen first; rooms restore meanwhile
    except Exception as exc:
        logging.getLogger("giants.server").error("could not start: %s", exc)
        await server.stop()
        return 1
    # One parseable line for scripts and tests that start the server with --port 0.
    print(f"giants serve: listening on ws://{config.host}:{server.port}", flush=True)
    web_host = config.host if config.host not in ("0.0.0.0", "::", "") else "127.0.0.1"
    print(f"giants serve: open http://{web_host}:{server.port}/ in a browser to play", flush=True)
    failed = asyncio.ensure_future(server.failed.wait())
    stopped = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({failed, stopped}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        failed.cancel()
        stopped.cancel()
        await server.stop()
    return 1 if server.failed.is_set() else 0


def port_taken(host: str, port: int) -> str | None:
    """Why `host:port` cannot be listened on (e.g. "address already in use"), or None.

    Checked before the embedded Redis starts, so a taken port fails fast and cleanly.
    """
    if port == 0:
        return None
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except OSError as exc:
        return str(exc)
    for family, kind, proto, _name, address in infos:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(address)
            except OSError as exc:
                return exc.strerror or str(exc)
    return None


def run(args: argparse.Namespace) -> int:
    from server.config import Config

    try:
        config = Config.from_args(args)
        config.validate()
    except ValueError as exc:
        print(f"giants serve: {exc}", file=sys.stderr)
        return 2
    logging.basicConfig(
        level=config.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    if config.loop not in ("auto", "uvloop", "asyncio"):
        print(f"giants serve: --loop must be auto, uvloop or asyncio, not {config.loop!r}", file=sys.stderr)
        return 2
    from server.workers import Supervisor, worker_count

    try:
        workers = worker_count(config.workers)
    except ValueError:
        print(f"giants serve: --workers must be a number from 1 to 256 or 'auto', not {config.workers!r}", file=sys.stderr)
        return 2
    taken = None if config.reuse_port else port_taken(config.host, config.port)
    if taken:
        print(f"giants serve: cannot listen on {config.host}:{config.port}: {taken}", file=sys.stderr)
        return 1
    if workers > 1:
        return Supervisor(config, workers).run()
    if config.loop != "asyncio":
        try:
            import uvloop
        except ImportError:
            if config.loop == "uvloop":
                print("giants serve: uvloop is not installed (pip install 'giants-table[speed]')", file=sys.stderr)
                return 2
        else:
            return int(uvloop.run(_main(config)))
    return asyncio.run(_main(config))
