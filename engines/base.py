"""The engine interface every game implements.

An engine is pure rules: no asyncio, sockets, Redis, clocks or global random. It is
deterministic — the same (players, options, seed) and the same sequence of
(seat, action) pairs always give the same state — so any game replays from its
action log. Chance comes only from the seed held in the state.

The caller's loop (a room on the server, the self-play command, a bot's search):

    engine = registry.get_engine("giantslayer")
    state = engine.new_game(players=2, options={}, seed=1234)
    while engine.outcome(state) is None:
        seat = pick one of engine.to_act(state)      # >1 seat = simultaneous step
        action = engine.parse_action(state, seat, text)   # or legal_actions(...)
        result = engine.apply(state, seat, action)   # raises IllegalActionError
        state = result.state                         # broadcast result.events
    engine.outcome(state)                            # scores, winners, reason

States are treated as immutable by callers: `apply` never mutates its input, so a
search bot may keep and branch from any state it has seen.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar

Seat = int
View = dict[str, Any]
Event = dict[str, Any]
# How a list or map in a state's view was made from one in the view of the state it was
# played from (`Engine.view_edits`): (that one, this one, the indexes or keys where they
# may differ).
ViewEdit = tuple[list[Any] | dict[str, Any], list[Any] | dict[str, Any], tuple[Any, ...]]
# Protocol 2's op codes (docs/protocol.md section 6: `[code, *path, value]`), for the ops
# an engine writes itself (`Engine.view_ops`): set, trunc and push, as protocol.compact
# numbers them (tests/protocol/test_compact_view.py checks they agree).
OP_SET, OP_TRUNC, OP_PUSH = 0, 2, 3

S = TypeVar("S")
A = TypeVar("A")


# ----------------------------------------------------------------------------- errors


class GameError(Exception):
    """Base of every error an engine raises; `code` is stable and goes on the wire."""

    code: ClassVar[str] = "game_error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class UnknownGameError(GameError):
    """No game is registered under that name; list them with `registry.all_games()`."""

    code = "unknown_game"


class UnknownRulesError(GameError):
    """The game exists but has no rule set of that name."""

    code = "unknown_rules"


class BadOptionsError(GameError):
    """Options or player count rejected at game creation; the message names the option."""

    code = "bad_options"


class NotationError(GameError):
    """The action text could not be parsed at all (a syntax error, not a rule error)."""

    code = "bad_notation"


class IllegalActionError(GameError):
    """The action is well-formed but the rules do not allow it now; the message says why."""

    code = "illegal_action"


class NotYourTurnError(IllegalActionError):
    """The seat is not among `to_act(state)`."""

    code = "not_your_turn"


class GameOverError(IllegalActionError):
    """The game has ended; no further actions are accepted."""

    code = "game_over"


class BadSnapshotError(GameError):
    """A snapshot could not be restored (wrong game, wrong version, corrupt data)."""

    code = "bad_snapshot"


# ----------------------------------------------------------------------------- metadata


@dataclass(frozen=True)
class OptionSpec:
    """One game option a room may set at creation.

    `kind` is int, bool or str. For ints, `minimum`/`maximum` bound the value; `choices`
    (any kind) lists the only accepted values.
    """

    name: str
    kind: type
    default: Any
    help: str
    choices: tuple[Any, ...] | None = None
    minimum: int | None = None
    maximum: int | None = None

    def validate(self, value: Any) -> Any:
        """Return the value if acceptable; raise BadOptionsError naming the option."""
        ok_type = isinstance(value, self.kind) and not (
            self.kind is int and isinstance(value, bool)
        )
        if not ok_type:
            raise BadOptionsError(
                f"option {self.name!r} must be {self.kind.__name__}, got {type(value).__name__}"
            )
        if self.choices is not None and value not in self.choices:
            raise BadOptionsError(f"option {self.name!r} must be one of {list(self.choices)}")
        if self.minimum is not None and value < self.minimum:
            raise BadOptionsError(f"option {self.name!r} must be >= {self.minimum}")
        if self.maximum is not None and value > self.maximum:
            raise BadOptionsError(f"option {self.name!r} must be <= {self.maximum}")
        return value

    def describe(self) -> dict[str, Any]:
        """Plain-data description for `giants games` and the lobby."""
        data: dict[str, Any] = {
            "name": self.name,
            "type": self.kind.__name__,
            "default": self.default,
            "help": self.help,
        }
        if self.choices is not None:
            data["choices"] = list(self.choices)
        if self.minimum is not None:
            data["min"] = self.minimum
        if self.maximum is not None:
            data["max"] = self.maximum
        return data


@dataclass(frozen=True)
class GameInfo:
    """What a game and one of its rule sets are, for listings and for generic tests.

    `max_plies` bounds the number of applied actions in any game (the engine's guards
    guarantee it); the conformance suite fails a playout that exceeds it.
    `complete_action_lists` is False for engines whose `legal_actions` lists a
    canonical subset (GIANTS bids and transports): there an unlisted action may still
    be legal, and `apply` accepts it.
    """

    name: str
    title: str
    rules: str
    min_players: int
    max_players: int
    hidden_information: bool
    chance: bool
    simultaneous: bool
    max_plies: int
    summary: str
    options: tuple[OptionSpec, ...] = ()
    complete_action_lists: bool = True
    spec: str = ""

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "rules": self.rules,
            "players": [self.min_players, self.max_players],
            "hidden_information": self.hidden_information,
            "chance": self.chance,
            "simultaneous": self.simultaneous,
            "summary": self.summary,
            "options": [o.describe() for o in self.options],
        }


# ----------------------------------------------------------------------------- results


@dataclass(slots=True, unsafe_hash=True)
class Transition(Generic[S]):
    """What `apply` returns: the new state and the public events the table saw.

    Events are plain msgpack-able dicts with a "type" key. They are PUBLIC: every
    seat and spectator receives them unchanged, so an engine never puts hidden data
    in an event; private consequences show up only in the acting seat's view.

    Never changed once built (nothing assigns to one), but not frozen: a frozen
    dataclass sets each field through `object.__setattr__`, and one is built on every
    move of every game (slots and plain assignment: ~2,800 instructions less each).
    """

    state: S
    events: tuple[Event, ...] = ()


@dataclass(frozen=True)
class Outcome:
    """The result of a finished game (the whole match, for engines that play one).

    `scores[seat]` is the seat's final score; `winners` holds the seats that share
    the best result (all tied seats on a draw); `reason` is a stable snake_case code
    ("escape", "three_towers", "turn_limit", ...) and `detail` a sentence for people.
    """

    scores: tuple[float, ...]
    winners: tuple[Seat, ...]
    reason: str
    detail: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def is_draw(self) -> bool:
        return len(self.winners) != 1

    def to_data(self) -> dict[str, Any]:
        return {
            "scores": list(self.scores),
            "winners": list(self.winners),
            "reason": self.reason,
            "detail": self.detail,
            **({"extra": dict(self.extra)} if self.extra else {}),
        }


def winners_by_score(scores: Sequence[float]) -> tuple[Seat, ...]:
    """The seats holding the best score (all of them when tied)."""
    best = max(scores)
    return tuple(seat for seat, score in enumerate(scores) if score == best)


# ----------------------------------------------------------------------------- engine


class NotationList(list[str]):
    """A legal list in notation (`Engine.legal_notation`) that says how it was made:
    `runs` are the sequences it is the concatenation of, in order, where a tuple is a
    run the engine keeps for good and never changes (a table's), so a room may join or
    pack each such run once and reuse it (server.legal_lists) instead of every entry.
    A list like any other to everything else."""

    __slots__ = ("runs",)

    runs: tuple[Sequence[str], ...]


class FixedNotation(list[str]):
    """A non-empty legal list in notation (`Engine.legal_notation`) whose entries are
    all ASCII strs of `width` characters (1 to 31), so a room packs it in one join of
    its entries (server.legal_lists.pack_legal) instead of packing each entry
    (tests/engines/test_conformance.py checks the promise on every such list). A list
    like any other to everything else."""

    __slots__ = ("width",)

    width: int


class Engine(ABC, Generic[S, A]):
    """One game under one rule set. Rule-set variants are subclasses, not `if` chains.

    Subclasses set `info` and implement the abstract methods. Every method is pure.
    """

    info: ClassVar[GameInfo]

    # -- creation -----------------------------------------------------------------

    def validate_options(self, players: int, options: Mapping[str, Any]) -> dict[str, Any]:
        """Fill defaults and check every option; raise BadOptionsError on anything wrong.

        Call this before `new_game`; `new_game` calls it too, so a bad value never
        reaches the rules.
        """
        info = self.info
        if not isinstance(players, int) or not info.min_players <= players <= info.max_players:
            raise BadOptionsError(
                f"{info.name} takes {info.min_players}-{info.max_players} players, got {players}"
            )
        known = {spec.name: spec for spec in info.options}
        unknown = sorted(set(options) - set(known))
        if unknown:
            raise BadOptionsError(f"unknown option(s) for {info.name}: {', '.join(unknown)}")
        resolved = {name: spec.default for name, spec in known.items()}
        for name, value in options.items():
            resolved[name] = known[name].validate(value)
        self.check_options(players, resolved)
        return resolved

    def check_options(self, players: int, options: Mapping[str, Any]) -> None:
        """Hook for cross-field checks (e.g. 'rounds must be 1 or even')."""

    @abstractmethod
    def new_game(self, players: int, options: Mapping[str, Any], seed: int) -> S:
        """Start a game. Raises BadOptionsError; otherwise the state is ready to play."""

    # -- turn structure -----------------------------------------------------------

    @abstractmethod
    def to_act(self, state: S) -> frozenset[Seat]:
        """Seats that may act now; two or more means a simultaneous step. Empty at the end."""

    @abstractmethod
    def legal_actions(self, state: S, seat: Seat) -> list[A]:
        """Actions `seat` may take now (empty if it may not act). Order is stable."""

    @abstractmethod
    def apply(self, state: S, seat: Seat, action: A) -> Transition[S]:
        """Apply one action for `seat`; return the new state and the public events.

        Raises GameOverError, NotYourTurnError or IllegalActionError (message says why).
        The input state is left untouched.
        """

    def legal_notation(self, state: S, seat: Seat) -> list[str]:
        """`legal_actions` written in notation, in the same order: what a room sends.

        Always equal to `[format_action(state, a) for a in legal_actions(state, seat)]`
        (the conformance suite checks it). Engines with long lists override it to
        write the strings directly, without building and formatting action objects.
        """
        return [self.format_action(state, a) for a in self.legal_actions(state, seat)]

    # True in an engine whose `legal_lines` may write a list: a room asks it only then,
    # and other engines' moves pay nothing for it.
    lines_notation: ClassVar[bool] = False

    def legal_lines(self, state: S, seat: Seat) -> tuple[str, int] | None:
        """`legal_notation` as one str and a width, when the engine writes it so without
        the list: `"".join("\\n" + entry for entry in legal_notation(state, seat))` for a
        non-empty list whose entries are all ASCII strs of `width` characters (1 to 31),
        none holding a line break. A room then packs it with one replace of the line
        breaks (server.legal_lists.open_lines) and makes the list only if a member needs
        it. None (the default): the caller asks `legal_notation` (the conformance suite
        checks both agree). An engine that overrides this sets `lines_notation`."""
        return None

    def waiting_for(self, state: S) -> frozenset[Seat]:
        """Seats the current step still waits for: the late ones when a deadline passes.

        Usually `to_act`. In a simultaneous step where a seat may replace what it sent
        (GIANTS bids), `to_act` keeps every seat until the step closes, while this
        returns only the seats that have not submitted yet; a room applies
        `default_action` to these and keeps the deadline while this set shrinks.
        """
        return self.to_act(state)

    def default_action(self, state: S, seat: Seat) -> A:
        """The action a room applies when `seat` runs out of time.

        The default is the first legal action; engines with a natural "do nothing"
        (an empty bid, a pass) override this.
        """
        actions = self.legal_actions(state, seat)
        if not actions:
            raise NotYourTurnError(f"seat {seat} has nothing to do")
        return actions[0]

    # -- what people see ----------------------------------------------------------

    @abstractmethod
    def view(self, state: S, seat: Seat | None) -> View:
        """Everything `seat` may see (None = a spectator), as msgpack-able plain data.

        This one function feeds snapshots, patches and bot observations, so hidden
        data that is not in here cannot leak anywhere.
        """

    def view_keys(self) -> tuple[str, ...]:
        """The map keys this game's views use, those a move changes first.

        Protocol 2 sends these as small numbers (its key table, docs/protocol.md §6). The
        list must be static — the same for every room of this game and rule set, never
        built from a state — so the table tells no seat anything. A key left out still
        works; it is only sent in full.
        """
        return ()

    # Event types that only say again what the view's change shows (a Causeway `place`
    # is the stone in `stacks` plus the action's notation): protocol 2 leaves them out of patches.
    restated_events: ClassVar[frozenset[str]] = frozenset()

    # Games with hidden information: how many leading entries of the game view are the
    # very same objects in every seat's view of a state (GIANTS: all but the viewer's
    # own entries, listed last). The server then diffs those entries once per change
    # for all members (server.views). 0: no such promise; each view is diffed whole.
    view_shared_start: ClassVar[int] = 0

    # True: every `legal_notation` list holds distinct entries, none with a line break
    # (tests/engines/test_conformance.py checks it on random games of every engine that
    # says so). The room then keeps a long list as a base of legal edits without
    # counting its line breaks or hashing its entries for repeats (server.legal_lists).
    plain_notation: ClassVar[bool] = False

    def view_edits(self, state: S) -> tuple[ViewEdit, ...]:
        """Hints for the server's diff of this state's view against the view of the
        state it was played from (perfect-information games: one view for all seats).

        Each edit (base, value, at) says: `value`, a list in `view(state, seat)`, was
        made from `base`, the list at the same place in the previous state's view, and
        holds base's very objects at every index below both lengths but those in `at`
        (ascending, each once). Or `value` and `base` are maps with str keys only, and
        `value` holds base's very keys and values but at the keys in `at` (each once, in
        the maps' order; a key may be new in `value` or gone from it); such a map may be
        the view itself, made from the previous state's view (the very object `view`
        gave for it), as the last edit, the others still applying to its entries. The
        server's diff (protocol.compact_view.diff_view) then looks only at `at` (and, in a
        list, past the shorter length), and only where a member's old view holds `base`
        and its new one `value` (by identity); the ops are the same as a walk of the
        whole list or map. An edit must be exact: a changed index or key left out of `at`
        is a change no member is sent. The default: none, every list and map walked
        whole.
        """
        return ()

    # True in an engine whose `view_ops` may write ops: a room asks it only then, and
    # other engines' moves pay nothing for it.
    writes_view_ops: ClassVar[bool] = False

    def view_ops(self, state: S, refs: Mapping[str, int], key: Any) -> tuple[View, list[list[Any]]] | None:
        """The server's diff of this state's view, written by the engine (perfect-information
        games): `(base, ops)`, where `base` is the view of the state this one was played
        from (the very object `view` gave for it) and `ops` are what
        `protocol.compact.diff_compact` finds between `base` and `view(state, None)` as the
        entry `key` of a map (a room's view: `key` is its game entry's reference, and
        each op's path starts with it), op for op, keys as `refs` (protocol 2's key
        table: `refs[k]`) gives them,
        codes OP_SET, OP_TRUNC, OP_PUSH; never one `set` of the whole view (the diff's
        choice when most of its entries changed: the engine then returns None). The
        server sends them to every member whose last view holds `base` instead of
        diffing the two (protocol.compact_view.diff_view). None (the default, or
        when the engine does not know): the server diffs, with `view_edits`. An engine
        that overrides this sets `writes_view_ops`; the conformance suite checks the ops
        against the diff on random games."""
        return None

    def state_from_view(self, view: View) -> S:
        """Rebuild a playable state from a spectator view (perfect-information games).

        Search bots see only views; for games without hidden information the
        spectator view carries everything the rules need (repetition history and guard
        counters included), so a bot can search from exactly the room's position.
        Engines with hidden information leave this unimplemented.
        """
        raise NotImplementedError(f"{self.info.name} has hidden information")

    @abstractmethod
    def outcome(self, state: S) -> Outcome | None:
        """The result once the game has ended, else None."""

    # -- notation -----------------------------------------------------------------

    @abstractmethod
    def parse_action(self, state: S, seat: Seat, text: str) -> A:
        """Read an action in the game's notation; raise NotationError if unreadable.

        Parsing does not check legality; `apply` does.
        """

    @abstractmethod
    def format_action(self, state: S, action: A) -> str:
        """Write an action in the game's notation; `parse_action` reads it back."""

    def public_action(self, state: S, seat: Seat, action: A) -> str | None:
        """What the table sees of `action` (about to be applied to `state` by `seat`).

        A room broadcasts this, not the notation, in its "action" event. The default is
        the full notation; engines with secret submissions redact them (GIANTS: a
        sealed bid shows as "bid", a replaced bid as None = broadcast nothing). The
        full notation still goes to the room's private action log.
        """
        return self.format_action(state, action)

    def apply_text(self, state: S, seat: Seat, text: str) -> Transition[S]:
        """Parse then apply: what a room does with an action received as text."""
        return self.apply(state, seat, self.parse_action(state, seat, text))

    # -- persistence --------------------------------------------------------------

    @abstractmethod
    def snapshot(self, state: S) -> dict[str, Any]:
        """The full state (hidden parts included) as plain msgpack-able data."""

    @abstractmethod
    def restore(self, data: Mapping[str, Any]) -> S:
        """Rebuild a state from `snapshot` output; raise BadSnapshotError if unusable."""

    @abstractmethod
    def players(self, state: S) -> int:
        """Number of seats in this game."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.info.name}/{self.info.rules}>"
