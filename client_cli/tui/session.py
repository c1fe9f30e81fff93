"""The terminal client's logic, shared by the interactive app and the script mode.

A `PlaySession` owns one `Client` and at most one current room. It reads one line at
a time: a command (`rooms`, `create`, `join`, `watch`, `leave`, `help`, ...) or, in a
room, a move in the game's notation. `screen()` is what to show now: the lobby
listing or the room drawn by `client_cli.render`. Everything the session shows comes
from the seat's (or spectator's) view as the server sent it.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from client_cli.client import Client, ClientError, RequestFailed, TrackedRoom
from client_cli.render import render_game, render_room, wrap_items
from client_cli.render.safe import printable
from client_cli.tui import lobby
from engines import get_engine

HELP = """\
Commands (the leading / is optional outside a room):
  N                            in the lobby: open its entry number N (resume your
                               game, join a free seat, watch, replay, or /play a game)
  /play GAME [rules=R]         join a waiting room of GAME with a free seat, or create
                               one and wait there for an opponent
  /rooms [GAME] [all]          list rooms (all = include finished ones)
  /games                       list the games and rule sets
  /create GAME [rules=R] [players=N] [seat=N] [bots=1:random,2:mcts] [private] [password=P]
               [nojoin] [NAME=VALUE ...]
                               create a room and sit down in it (extra NAME=VALUE
                               pairs are game options; nojoin: only create it)
  /join ROOM [SEAT] [password=P]   take a seat (first free one by default);
                               ROOM may be @created, the room you created last.
                               A seat you already hold there is resumed instead
  /resume ROOM                 take back your seat in ROOM (tokens are kept in
                               ~/.local/state/giants-table/seats.json)
  /watch ROOM [password=P]     spectate a room
  /leave                       leave the current room
  /replay ROOM                 the final position and every move of a finished room;
                               /first /prev [N] /next [N] /last (or F7 / F8) step through it
  /moves                       show all your legal moves
  /resign                      give up the game
  /abort                       end the game without a result (first moves only)
  /draw                        offer a draw, or accept the one offered (two players)
  /decline                     decline a draw offer, or withdraw yours
  /help                        this text;  /quit  leave the program
In a room, anything else is a move in the game's notation, e.g. a5-b5 (Giantslayer),
D4 or xD4 (Tara), 0,1>3,-2 (Giant's Causeway), bid 1 w1 c (GIANTS, a sealed bid)."""

COMMANDS = (
    "play", "rooms", "games", "create", "join", "resume", "watch", "leave", "moves", "replay", "help", "quit",
    "resign", "abort", "draw", "decline", "next", "prev", "first", "last",
)  # fmt: skip
# In-game commands and the Client method each calls.
ENDINGS = {"resign": "resign", "abort": "abort", "draw": "offer_draw", "decline": "decline_draw"}


@dataclass
class Reply:
    """The result of one input line: text for the status line, and whether it failed."""

    text: str
    error: bool = False
    quit: bool = False
    panel: bool = False  # long text (help, moves): the app shows it in the board pane

    def __post_init__(self) -> None:
        self.text = printable(self.text)  # it may quote the server or other players


@dataclass
class PlaySession:
    """One player's session: a client, the current room, the last lobby listing."""

    client: Client
    room: TrackedRoom | None = None
    rooms: list[dict[str, Any]] = field(default_factory=list)
    last_created: str | None = None  # `@created` in /join and /watch names it
    last_password: str | None = None  # the password of the room created last
    replay: dict[str, Any] | None = None  # the finished room /replay shows, stepped by /next /prev
    replay_at: int = 0  # actions of the replay applied in the position shown
    panel: str | None = None  # help or the move list, shown until the next command
    lobby_commands: list[str] = field(default_factory=list)  # what lobby number N + 1 runs
    legal_limit: int = 80
    recent_count: int = 8

    # ------------------------------------------------------------------ showing

    def screen(self, width: int = 100) -> str:
        """The text to display now: the current room, or the lobby (terminal-safe:
        other people's names and texts cannot carry control characters through); move
        lists are wrapped to `width` columns."""
        if self.panel is not None:
            return printable(self.panel)
        if self.room is None and self.replay is not None:
            return printable(replay_screen(self.replay, self.replay_at))
        if self.room is not None and self.room.view is not None:
            return printable(render_room(
                self.room.view, self.room.seat, self.room.legal, self.recent(), self.legal_limit,
                now=time.time(), width=width,
            ))
        return self.lobby_text()

    def recent(self) -> list[str]:
        """The last moves as `seat N: action`, oldest first."""
        if self.room is None:
            return []
        me = self.room.seat
        moves = []
        for e in self.room.events:
            if e.get("type") != "action":
                continue
            action = str(e.get("action"))
            if action.startswith("bid ") and e.get("seat") != me:
                # GI-8: another seat's bid is sealed until all are in (the revealed bids
                # are on the board); never show its contents here.
                action = "bid (sealed)"
            moves.append(f"seat {e.get('seat')}: {action}")
        return moves[-self.recent_count:]

    def lobby_text(self) -> str:
        """The lobby: your games, the open rooms and the games to start, numbered (typing
        a number opens that entry; `lobby_commands` holds what each number runs)."""
        store = self.client.seat_store
        try:
            mine = store.entries(self.client.url) if store is not None else []
        except OSError:
            mine = []
        text, self.lobby_commands = lobby.lobby_text(mine, self.rooms, self.client.games, time.time())
        return printable(text)

    def games_text(self) -> str:
        lines = []
        for g in self.client.games:
            low, high = g.get("players") or ["?", "?"]
            lines.append(f"{g.get('name')}/{g.get('rules')}: {low}-{high} players - {g.get('summary', '')}")
        return "\n".join(lines)

    # ------------------------------------------------------------------ input

    async def handle(self, line: str) -> Reply:
        """Run one line of input; never raises for a server refusal (it is the reply)."""
        text = line.strip()
        self.panel = None  # help or the move list stays up until the next line
        if not text:
            return Reply("")
        if self.room is None and text.isdigit():
            return await self.open_entry(int(text))
        word = text.split()[0].lstrip("/").lower()
        is_command = text.startswith("/") or (self.room is None and word in COMMANDS)
        try:
            reply = await self.command(word, text.split()[1:]) if is_command else await self.move(text)
        except RequestFailed as exc:
            return Reply(f"error [{exc.code}]: {exc.message}", error=True)
        except ClientError as exc:
            return Reply(f"error: {exc}", error=True)
        if reply.error and not reply.text.startswith("error"):
            reply.text = f"error: {reply.text}"
        if reply.panel:
            self.panel = reply.text
        return reply

    async def command(self, word: str, args: list[str]) -> Reply:
        if word == "help":
            return Reply(HELP, panel=True)
        if word == "quit":
            return Reply("bye", quit=True)
        if word == "games":
            return Reply(self.games_text())
        if word == "rooms":
            game = next((a for a in args if a != "all"), None)
            self.rooms = await self.client.list_rooms(game, include_finished="all" in args)
            self.replay = None
            return Reply(f"{len(self.rooms)} room(s)")
        if word == "create":
            return await self.create(args)
        if word == "play":
            return await self.quick_play(args)
        if word in ("join", "watch"):
            if not args:
                return Reply(f"usage: /{word} ROOM" + (" [SEAT]" if word == "join" else ""), error=True)
            if args[0] == "@created":
                if self.last_created is None:
                    return Reply("no room created yet", error=True)
                args = [self.last_created, *args[1:]]
            pairs = dict(a.split("=", 1) for a in args[1:] if "=" in a)
            password = pairs.get("password")
            # The previous room stays tracked (its seat is kept); the screen switches.
            if word == "join":
                seat = next((int(a) for a in args[1:] if a.isdigit()), None)
                if password is None and args[0] == self.last_created:
                    password = self.last_password
                store = self.client.seat_store
                held = store.find(self.client.url, args[0], seat) if store is not None else None
                self.room = await self.client.join(args[0], seat, password)
                if held is not None and self.room.token == held.token:
                    return Reply(f"resumed seat {self.room.seat} of room {args[0]}")
                return Reply(f"joined room {args[0]} as seat {self.room.seat}")
            self.room = await self.client.watch(args[0], password)
            return Reply(f"watching room {args[0]}")
        if word == "resume":
            return await self.resume(args)
        if word in ENDINGS:
            if self.room is None or self.room.seat is None:
                return Reply(f"/{word} needs a seat in a game", error=True)
            await getattr(self.client, ENDINGS[word])(self.room.id)
            done = {"resign": "you resigned", "abort": "game aborted",
                    "draw": "draw offered" if self.room.info.get("draw_offer") is None else "draw agreed",
                    "decline": "draw offer declined"}  # fmt: skip
            return Reply(done[word])
        if word == "leave":
            if self.room is None:
                return Reply("you are not in a room", error=True)
            room_id = self.room.id
            await self.client.leave(room_id)
            self.room = None
            return Reply(f"left room {room_id}")
        if word == "replay":
            if not args:
                return Reply("usage: /replay ROOM", error=True)
            self.replay = await self.client.replay(args[0])
            self.room = None
            self.replay_at = len(self.replay["actions"])
            return Reply(f"replay of room {args[0]}: /first /prev [N] /next [N] /last step through it")
        if word in ("next", "prev", "first", "last"):
            return self.step_replay(word, args)
        if word == "moves":
            if self.room is None or not self.room.legal:
                return Reply("no legal moves: it is not your turn")
            return Reply(moves_text(self.room.legal), panel=True)
        return Reply(f"unknown command /{word}; /help lists them", error=True)

    def step_replay(self, word: str, args: list[str]) -> Reply:
        """/first, /prev [N], /next [N], /last: move through the replay shown."""
        if self.replay is None or self.room is not None:
            return Reply("no replay shown: /replay ROOM first", error=True)
        total = len(self.replay["actions"])
        count = int(args[0]) if args and args[0].isdigit() else 1
        target = {"first": 0, "last": total, "prev": self.replay_at - count, "next": self.replay_at + count}[word]
        self.replay_at = max(0, min(total, target))
        return Reply(f"move {self.replay_at} of {total}")

    async def create(self, args: list[str], join: bool = True) -> Reply:
        """`/create GAME ...`: create a room and take a seat in it (seat=N, or the first
        free one); `nojoin` only creates it."""
        seat: int | None = None
        if "nojoin" in args:
            args = [a for a in args if a != "nojoin"]
            join = False
        if not args:
            return Reply("usage: /create GAME [rules=R] [players=N] [bots=1:random] [NAME=VALUE ...]", error=True)
        game, rest = args[0], args[1:]
        fields: dict[str, Any] = {}
        options: dict[str, Any] = {}
        for item in rest:
            if item == "private":
                fields["private"] = True
                continue
            key, sep, value = item.partition("=")
            if not sep:
                return Reply(f"expected NAME=VALUE, got {item!r}", error=True)
            if key == "rules":
                fields["rules"] = value
            elif key in ("players", "seat"):
                if not value.isdigit():
                    return Reply(f"{key} must be a number, not {value!r}", error=True)
                if key == "seat":
                    seat = int(value)
                else:
                    fields["players"] = int(value)
            elif key == "password":
                fields["password"] = value
            elif key == "bots":
                fields["bots"] = dict(pair.split(":", 1) for pair in value.split(",") if ":" in pair)
            else:
                try:
                    options[key] = json.loads(value)
                except json.JSONDecodeError:
                    options[key] = value
        data = await self.client.create_room(game, options=options or None, **fields)
        self.last_created = str(data["room"])
        self.last_password = fields.get("password")
        if not join:
            return Reply(f"created room {data['room']}")
        # Sit down at once (the seat given as seat=N, else the first free one).
        self.room = await self.client.join(self.last_created, seat, self.last_password)
        return Reply(f"created room {data['room']} and joined it as seat {self.room.seat}")

    async def open_entry(self, number: int) -> Reply:
        """A lobby number: run the command of that entry (resume, join, watch, replay, play)."""
        if not self.lobby_commands:  # no lobby shown yet (script mode): list it now
            self.rooms = await self.client.list_rooms()
            self.lobby_text()
        if not 1 <= number <= len(self.lobby_commands):
            return Reply(f"no entry {number} in the lobby (1..{len(self.lobby_commands)}); /rooms refreshes it",
                         error=True)
        return await self.handle(self.lobby_commands[number - 1])

    async def quick_play(self, args: list[str]) -> Reply:
        """`/play GAME [rules=R] ...`: sit down in the oldest waiting public room of GAME
        with a free seat; when there is none, create one (with the /create arguments
        given) and wait in it."""
        if not args:
            return Reply("usage: /play GAME [rules=R]; the lobby lists the games", error=True)
        game = args[0]
        rules = next((a.split("=", 1)[1] for a in args[1:] if a.startswith("rules=")), None)
        try:
            store = self.client.seat_store
            mine = {e.room for e in store.entries(self.client.url)} if store is not None else set()
        except OSError:  # an unreadable seat file: no games of yours to skip
            mine = set()
        pick = lobby.quick_pick(await self.client.list_rooms(game), game, rules, mine)
        if pick is not None:
            self.room = await self.client.join(pick)
            return Reply(f"joined room {pick} as seat {self.room.seat}")
        reply = await self.create(args)
        if not reply.error:
            reply.text += f"; waiting for players (they join with /play {game}, or the room's number in the lobby)"
        return reply

    async def resume(self, args: list[str]) -> Reply:
        """Take back a seat whose token the seat store holds."""
        store = self.client.seat_store
        if not args:
            return Reply("usage: /resume ROOM (your games are listed by /rooms)", error=True)
        entry = store.find(self.client.url, args[0]) if store is not None else None
        if entry is None:
            return Reply(f"you hold no seat in room {args[0]} on this server; /join it", error=True)
        self.room = await self.client.resume(args[0], entry.token)
        return Reply(f"resumed seat {self.room.seat} of room {args[0]}")

    async def move(self, text: str) -> Reply:
        if self.room is None:
            return Reply(f"not in a room: {text!r} is neither a move nor a command (/help)", error=True)
        if self.room.seat is None:
            return Reply("you are watching: spectators cannot move", error=True)
        if not self.room.legal:
            return Reply("it is not your turn", error=True)
        await self.client.act(self.room.id, text)
        return Reply(f"played {text}")


def moves_text(legal: list[str]) -> str:
    """Every legal move, grouped by kind (its first word), one group per paragraph."""
    groups = group_moves(legal)
    lines = [f"Legal moves ({len(legal)}):"]
    for kind, moves in groups.items():
        lines.append("")
        lines.append(wrap_items(f"{kind} ({len(moves)}):", moves, " | " if any(" " in m for m in moves) else " "))
    return "\n".join(lines)


def group_moves(legal: list[str]) -> dict[str, list[str]]:
    """Moves by kind: the first word of multi-word moves ("bid", "place", "pass"),
    "capture" for xD4-style captures, the piece of a placement ("giant" for
    `giant@0,1`), "step" and "leap" for `0,1>3,-2` and `0,1^e`, "moves" for the rest."""
    groups: dict[str, list[str]] = {}
    for move in legal:
        if " " in move:
            kind = move.split(" ", 1)[0]
        elif move.startswith("x") and len(move) > 1 and move[1].isupper():
            kind = "capture"
        elif "@" in move:
            kind = move.split("@", 1)[0]
        elif ">" in move or "^" in move:
            kind = "step" if ">" in move else "leap"
        else:
            kind = "pass" if move == "pass" else "moves"
        groups.setdefault(kind, []).append(move)
    return groups


def replay_screen(replay: dict[str, Any], upto: int | None = None) -> str:
    """A finished room's position after `upto` of its actions (all by default), rebuilt
    from its seed and action log with the local engine (spectator view), its outcome
    and its moves, the last one applied marked with `>`."""
    engine = get_engine(replay["game"], replay["rules"])
    state = engine.new_game(replay["players"], replay["options"], replay["seed"])
    actions = replay["actions"]
    upto = len(actions) if upto is None else max(0, min(upto, len(actions)))
    for entry in actions[:upto]:
        state = engine.apply_text(state, entry["seat"], entry["action"]).state
    outcome = replay.get("outcome") or {}
    moves = [f"{'>' if i + 1 == upto else ''}{i + 1}. seat {e['seat']}: {e['action']}" for i, e in enumerate(actions)]
    where = "final position" if upto == len(actions) else f"after move {upto} of {len(actions)}"
    return "\n".join([
        f"Replay - {replay['game']}/{replay['rules']}, {replay['players']} players, seed {replay['seed']} - {where}",
        f"Outcome: winners {outcome.get('winners')}; scores {outcome.get('scores')}; {outcome.get('reason')}",
        "",
        render_game(replay["game"], engine.view(state, None), None),
        "",
        wrap_items(f"Moves ({len(moves)}):", moves, " | "),
    ])
