"""`giants games`: list every registered game with its rule sets and options."""

from __future__ import annotations

import argparse
import json

from engines import all_games


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")


def run(args: argparse.Namespace) -> int:
    games = all_games()
    if args.json:
        data = [
            {"name": g.name, "default_rules": g.default_rules, "rule_sets": [i.describe() for i in g.infos]}
            for g in games
        ]
        print(json.dumps(data, indent=2))
        return 0
    for game in games:
        first = game.infos[0]
        players = (
            f"{first.min_players}" if first.min_players == first.max_players
            else f"{first.min_players}-{first.max_players}"
        )
        traits = [
            "hidden information" if first.hidden_information else "perfect information",
            "chance" if first.chance else "no chance",
        ]
        if first.simultaneous:
            traits.append("simultaneous steps")
        print(f"{game.name} — {first.title} ({players} players; {', '.join(traits)})")
        for info in game.infos:
            default = " (default)" if info.rules == game.default_rules else ""
            print(f"  rules {info.rules}{default}: {info.summary}")
            for option in info.options:
                print(f"    option {option.name}={option.default!r}: {option.help}")
    return 0
