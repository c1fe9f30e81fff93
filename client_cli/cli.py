"""The `giants` command: one subcommand per module, imported only when used.

Each command module exposes `add_arguments(parser)` and `run(args) -> int`; list it in
COMMANDS with a one-line help. Heavy imports (websockets, textual, redis) live in the
command modules, so `giants games` starts fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

# name -> (module, help)
COMMANDS: dict[str, tuple[str, str]] = {
    "games": ("client_cli.commands.games", "list the games, rule sets and options"),
    "selfplay": ("client_cli.commands.selfplay", "play random games locally and print results"),
    "serve": ("server.cli", "run the game server (embedded Redis unless --redis-url)"),
    "play": ("client_cli.commands.play", "join rooms on a server from the terminal"),
    "watch": ("client_cli.commands.watch", "spectate a room on a server"),
    "bot": ("client_cli.commands.bot", "run a bot in a room over the protocol"),
    "arena": ("client_cli.commands.arena", "pit bots against each other locally"),
}


def version() -> str:
    """`giants-table X.Y.Z (protocol N)` from the installed package's metadata."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    from protocol.version import PROTOCOL_VERSION

    try:
        number = dist_version("giants-table")
    except PackageNotFoundError:  # run from a source tree without installing
        number = "unknown"
    return f"giants-table {number} (protocol {PROTOCOL_VERSION})"


def build_parser(available: dict[str, tuple[str, str]] | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="giants", description="Giants Table: a board-game server, client and bots."
    )
    parser.add_argument("--version", action="version", version=version())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (module_name, help_text) in (available or COMMANDS).items():
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name and module_name.startswith(exc.name):
                continue  # command not built yet
            raise
        command = sub.add_parser(name, help=help_text, description=help_text)
        module.add_arguments(command)
        command.set_defaults(_run=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--version"]:  # answer without importing every command
        print(version())
        return 0
    # Import only the chosen command's module when it is named, to keep start-up fast.
    chosen = {argv[0]: COMMANDS[argv[0]]} if argv and argv[0] in COMMANDS else None
    parser = build_parser(chosen)
    args = parser.parse_args(argv)
    code: int = args._run(args)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
