"""server.legal_lists: a member's base, flagged DistinctBase when its entries are known to
be distinct, and the edits from it: the same splices as legal_edit on the split base
whatever the flag (the fast path for flagged bases, protocol.legal_edit_joined's
`distinct`), and the list joined once per publish."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from engines import registry
from engines.base import FixedNotation, NotationList
from protocol import legal_edit
from protocol.packer import packb
from server.legal_lists import (
    CHECK_FROM,
    EDIT_FROM,
    EMPTY_HASH,
    LEGAL_SEP,
    DistinctBase,
    join_legal,
    joined_legal,
    legal_change,
    lines_list,
    list_bytes,
    open_legal,
    open_lines,
    pack_legal,
    with_legal,
)
from server.seats import Member


def entries(n: int, start: int = 0) -> list[str]:
    return [f"place giant-{i:03d} at k{i % 17}" for i in range(start, start + n)]


def test_a_long_list_sent_whole_is_flagged_and_a_short_or_odd_one_is_not() -> None:
    long = entries(300)
    assert len(LEGAL_SEP.join(long)) >= CHECK_FROM
    assert type(joined_legal(long)) is DistinctBase
    assert joined_legal(long) == LEGAL_SEP.join(long)
    assert type(joined_legal([*long, long[5]])) is str  # repeats an entry: unflagged
    assert joined_legal([*long[:-1], "a\nb"]) is None  # a separator inside: no base
    mid = entries(100)  # editable (over EDIT_FROM) but under CHECK_FROM: not checked
    assert type(joined_legal(mid)) is str
    assert joined_legal(entries(5)) is None
    # An engine's promise (Engine.plain_notation): the same base, without the checks
    for legal in (long, mid, entries(5)):
        got = joined_legal(legal, plain=True)
        assert got == joined_legal(legal) and type(got) is type(joined_legal(legal))


def test_a_removal_flags_the_next_base_and_an_addition_does_not() -> None:
    base, cache = entries(150), {}  # type: ignore[var-annotated]
    assert len(LEGAL_SEP.join(base)) < CHECK_FROM  # so only an edit can flag it
    member = Member(None, 0)  # type: ignore[arg-type]
    member.legal_base = joined_legal(base)
    assert type(member.legal_base) is str
    gone = base[:10] + base[40:]
    assert legal_change(member, gone, cache) == [[10, 30]] == legal_edit(base, gone)
    assert type(cache[0, None]) is DistinctBase  # joined once, now known distinct
    member.legal_base = joined_legal(gone, cache, 0)
    assert type(member.legal_base) is DistinctBase and member.legal_base == LEGAL_SEP.join(gone)
    cache = {}
    grown = gone[:10] + entries(3, 500) + gone[10:]
    assert legal_change(member, grown, cache) == legal_edit(gone, grown)
    assert type(joined_legal(grown, cache, 0)) is str
    # the same base of another connection of the seat shares the edit
    other = Member(None, 0)  # type: ignore[arg-type]
    other.legal_base = member.legal_base
    assert legal_change(other, grown, cache) is cache[0, id(member.legal_base)][1]
    # a long list is checked whatever came before
    longer = grown + entries(200, 1000)
    cache = {}
    assert legal_change(member, longer, cache) is None  # mostly new: sent whole
    assert type(joined_legal(longer, cache, 0)) is DistinctBase


def test_edits_from_flagged_and_plain_bases_are_legal_edit_in_giants_games() -> None:
    """Each seat's lists in random GIANTS games (placements GI-12..GI-17 lost as figures
    are placed: the removals the flag is for), kept as a publish keeps them: the edit
    from the kept base (flagged or not) is legal_edit's on the last list (a short list
    is sent whole), with the engine's promise of plain lists (`plain_notation`) taken or
    not, and the same base kept either way."""
    engine = registry.get_engine("giants")
    flagged = 0
    for seed in range(3):
        rng = random.Random(seed)
        state = engine.new_game(2, {}, seed)
        members = {s: Member(None, s) for s in (0, 1)}  # type: ignore[arg-type]
        last: dict[int, list[str]] = {}
        for _ in range(300):
            if engine.outcome(state) is not None:
                break
            seat = min(engine.waiting_for(state))
            legal = engine.legal_notation(state, seat)
            member, cache = members[seat], {}  # type: ignore[var-annotated]
            plain = seed % 2 == 1  # as publish passes GiantsEngine.plain_notation, or not
            if member.legal_base is not None:
                flagged += type(member.legal_base) is DistinctBase
                want = legal_edit(last[seat], legal) if list_bytes(legal) >= EDIT_FROM else None  # short: whole
                assert legal_change(member, legal, cache, plain) == want
            base = joined_legal(legal, cache, seat, plain)
            assert base == joined_legal(legal, cache, seat) and type(base) is type(joined_legal(legal, cache, seat))
            member.legal_base = base
            last[seat] = legal
            state = engine.apply_text(state, seat, rng.choice(legal)).state
    assert flagged > 50


def test_lists_under_edit_from_are_sent_whole_and_keep_no_base() -> None:
    """Giantslayer's lists (slides GS-5, steps and tramples GS-6) and Causeway barrier's
    (GC-B2..B7) stay under EDIT_FROM in random games, long ones of 1 KB and more
    included: each is sent whole (legal_change gives None) and no base is kept for it
    (joined_legal gives None), so a protocol 3 member of these games costs no base's
    memory and no edit's work."""
    long_lists = 0
    for game, rules in (("giantslayer", None), ("causeway", "barrier")):
        engine = registry.get_engine(game, rules)
        for seed in range(3):
            rng = random.Random(seed)
            state = engine.new_game(2, {}, seed)
            member = Member(None, 0)  # type: ignore[arg-type]
            member.legal_base = LEGAL_SEP.join(entries(150))  # as if a long list came before
            for _ in range(400):
                if engine.outcome(state) is not None:
                    break
                seat = min(engine.waiting_for(state))
                legal = engine.legal_notation(state, seat)
                assert list_bytes(legal) < EDIT_FROM, (game, seed, len(legal))
                long_lists += list_bytes(legal) >= 1024
                member.seat = seat
                assert legal_change(member, legal, {}, engine.plain_notation) is None
                assert joined_legal(legal, {}, seat, engine.plain_notation) is None
                state = engine.apply_text(state, seat, rng.choice(legal)).state
    assert long_lists > 5  # lists an EDIT_FROM of 1 KB would have edited


def test_open_rooms_hash_a_list_by_its_packed_bytes() -> None:
    """`open_legal` (a room without hidden information: the list packed once, for its hash
    and its frame): the bytes are msgpack's of the list as a plain list, whatever its kind
    (Giantslayer's white lists are FixedNotation, GS-5), the hash theirs, and an empty
    list None and EMPTY_HASH; two lists of a seat hash alike exactly when they are equal
    (the only lists publish then leaves unsent) over random games."""
    assert open_legal([]) == (None, EMPTY_HASH)
    kinds: set[type] = set()
    for game, rules in (("giantslayer", None), ("tara", None), ("causeway", "barrier")):
        engine = registry.get_engine(game, rules)
        for seed in range(3):
            rng = random.Random(seed)
            state = engine.new_game(2, {}, seed)
            last: dict[int, tuple[list[str], int]] = {}
            for _ in range(300):
                if engine.outcome(state) is not None:
                    break
                seat = min(engine.waiting_for(state))
                legal = engine.legal_notation(state, seat)
                packed, legal_hash = open_legal(legal)
                assert packed == packb(list(legal)) and legal_hash == hash(packed)
                kinds.add(type(legal))
                before = last.get(seat)
                if before is not None:
                    assert (legal_hash == before[1]) == (list(legal) == before[0])
                last[seat] = (list(legal), legal_hash)
                state = engine.apply_text(state, seat, rng.choice(legal)).state
    assert FixedNotation in kinds and list in kinds


_ENTRY = st.text(st.characters(codec="utf-8"), max_size=40)
# Runs as an engine keeps them (tuples, reused between lists) or makes them (lists)
_TABLES = [tuple(f"place worker ({i},{j}) {k}" for i in range(n) for j in range(3)) for k, n in ((0, 1), (1, 6), (2, 30))]


@given(st.lists(st.one_of(st.sampled_from(_TABLES), st.lists(_ENTRY, max_size=20).map(tuple),
                          st.lists(_ENTRY, max_size=20), st.just(())), max_size=8),
       st.dictionaries(st.sampled_from(["type", "room", "from", "ops", "act", "events"]), st.integers(-(2**63), 2**64 - 1), max_size=6))
def test_a_notation_list_joins_and_packs_as_its_entries_do(runs: list[tuple[str, ...] | list[str]],
                                                          frame: dict[str, int]) -> None:
    """join_legal, pack_legal and with_legal on a NotationList (runs joined and packed
    once, by identity) give LEGAL_SEP.join, packb and the frame packed whole; the same
    list called twice (its tuples then found in the table) too; and plain lists."""
    legal = NotationList()
    for run in runs:
        legal += run
    legal.runs = tuple(runs)
    plain = list(legal)
    for _ in range(2):
        assert join_legal(legal) == LEGAL_SEP.join(plain) == join_legal(plain)
        assert pack_legal(legal) == packb(plain) == pack_legal(plain)
        assert with_legal(frame, legal) == packb({**frame, "legal": plain})


def test_long_notation_lists_pack_with_their_headers() -> None:
    """Lists of 15/16 and 65,535/65,536 entries (msgpack's array headers change there)."""
    for n in (15, 16, 65_535, 65_536):
        run = tuple(f"a{i}" for i in range(n - 1))
        legal = NotationList([*run, "pass"])
        legal.runs = (run, ["pass"])
        assert pack_legal(legal) == packb(list(legal))


def fixed(entries: list[str], width: int) -> FixedNotation:
    legal = FixedNotation(entries)
    legal.width = width
    return legal


@given(st.integers(1, 31).flatmap(lambda width: st.tuples(
    st.just(width), st.lists(st.text(st.characters(max_codepoint=127), min_size=width, max_size=width), max_size=40))),
       st.dictionaries(st.sampled_from(["type", "room", "from", "ops", "act", "events"]), st.integers(-(2**63), 2**64 - 1), max_size=6))
def test_a_fixed_width_list_packs_as_its_entries_do(case: tuple[int, list[str]], frame: dict[str, int]) -> None:
    """pack_legal and with_legal on a FixedNotation (ASCII entries of one width, 1 to
    31 characters: each a fixstr; the entries joined with its header byte) give packb of
    the plain list and the frame packed whole, empty lists and lists around msgpack's
    fixarray bound included."""
    width, entries = case
    legal = fixed(entries, width)
    assert pack_legal(legal) == packb(entries)
    assert with_legal(frame, legal) == packb({**frame, "legal": entries})


def test_long_fixed_width_lists_pack_with_their_headers() -> None:
    """Lists of 15/16 and 65,535/65,536 entries (msgpack's array headers change there),
    and Giantslayer's own white lists (its slides: SLIDE_WIDTH characters)."""
    for n in (15, 16, 65_535, 65_536):
        entries = [f"{i:07d}" for i in range(n)]
        assert pack_legal(fixed(entries, 7)) == packb(entries)
    engine = registry.get_engine("giantslayer")
    state = engine.new_game(2, {}, 0)
    legal = engine.legal_notation(state, 0)
    assert type(legal) is FixedNotation and len(legal) == 144  # GS-5's opening list
    assert pack_legal(legal) == packb(list(legal))


@given(st.integers(1, 31).flatmap(lambda width: st.tuples(st.just(width), st.lists(
    st.text(st.characters(max_codepoint=127, blacklist_characters="\n"), min_size=width, max_size=width),
    min_size=1, max_size=40))))
def test_a_list_written_as_lines_opens_as_the_list(case: tuple[int, list[str]]) -> None:
    """open_lines of a list written as `Engine.legal_lines` writes it (each ASCII entry of
    one width after a line break) gives open_legal's bytes and hash of the list, and
    lines_list gives the list back, at msgpack's fixarray bound and around it."""
    width, entries = case
    text = "".join("\n" + entry for entry in entries)
    assert open_lines(text, width) == open_legal(entries) == open_legal(fixed(entries, width))
    assert lines_list(text) == entries


def test_long_lists_written_as_lines_and_giantslayers_own() -> None:
    """Lists of 15/16 and 65,535/65,536 entries, and Giantslayer's white lists."""
    for n in (15, 16, 65_535, 65_536):
        entries = [f"{i:07d}" for i in range(n)]
        text = "".join("\n" + entry for entry in entries)
        assert open_lines(text, 7) == open_legal(entries) and lines_list(text) == entries
    engine = registry.get_engine("giantslayer")
    state = engine.new_game(2, {}, 0)
    lines = engine.legal_lines(state, 0)
    assert lines is not None and lines_list(lines[0]) == engine.legal_notation(state, 0)
    assert open_lines(*lines) == open_legal(engine.legal_notation(state, 0))
