"""protocol.legal: a legal list sent as splices from the seat's previous one."""

from __future__ import annotations

import random

import msgpack
import pytest

from engines import registry
from protocol import PatchError, apply_legal_edit, legal_edit, legal_edit_joined


def test_the_documented_example() -> None:
    base = ["a1-a2", "a1-b1", "c3-c4", "d1-d2"]
    assert apply_legal_edit(base, [[1, 1], [2, 0, "d1-e1", "e5-e6"]]) == ["a1-a2", "c3-c4", "d1-e1", "e5-e6", "d1-d2"]
    assert base == ["a1-a2", "a1-b1", "c3-c4", "d1-d2"]  # left as it was


def test_random_edits_rebuild_the_new_list() -> None:
    rng = random.Random(1)
    pool = [f"move {i}" for i in range(300)]
    for _ in range(500):
        base = sorted(rng.sample(range(300), rng.randint(0, 80)))
        new = sorted(rng.sample(range(300), rng.randint(1, 80)))
        old, fresh = [pool[i] for i in base], [pool[i] for i in new]
        edit = legal_edit(old, fresh)
        if edit is not None:
            assert apply_legal_edit(old, edit) == fresh
            assert len(msgpack.packb(edit)) < len(msgpack.packb(fresh)) + 8


def test_a_seats_next_turn_in_a_real_game_is_a_small_edit() -> None:
    """GIANTS placement turns: the next list shares most of the previous one."""
    engine = registry.get_engine("giants")
    rng = random.Random(2)
    state = engine.new_game(2, {}, 2)
    last: dict[int, list[str]] = {}
    sizes = []
    for _ in range(300):
        seat = min(engine.to_act(state))
        legal = engine.legal_notation(state, seat)
        if seat in last:
            edit = legal_edit(last[seat], legal)
            if edit is not None:
                assert apply_legal_edit(last[seat], edit) == legal
                sizes.append(len(msgpack.packb(edit)) / len(msgpack.packb(legal)))
        last[seat] = legal
        state = engine.apply_text(state, seat, rng.choice(legal)).state
    assert len(sizes) > 100 and sorted(sizes)[len(sizes) // 2] < 0.25


def test_reordered_or_repeated_lists_are_sent_whole() -> None:
    assert legal_edit(["a", "b", "c"], ["c", "b", "a"]) is None
    assert legal_edit(["a", "a"], ["a", "b"]) is None
    assert legal_edit(["a"], ["b"]) is None  # an edit no smaller than the list


@pytest.mark.parametrize(
    "splices",
    [{}, [[0]], [[5, 0]], [[0, 4]], [["0", 0]], [[0, 0, 3]], [[True, 0]], "x", [[-1, 0]]],
)
def test_an_edit_that_does_not_fit_is_a_patch_error(splices: object) -> None:
    with pytest.raises(PatchError):
        apply_legal_edit(["a", "b", "c"], splices)


def test_the_joined_base_edit_is_legal_edit_on_random_lists() -> None:
    """legal_edit_joined's run search against the plain rule (split the base, legal_edit):
    one run changed, several, entries moved or repeated, empty entries, the separator
    inside an entry, empty lists."""
    rng = random.Random(4)
    for _ in range(20_000):
        pool = [f"m{i}" for i in range(rng.randint(1, 12))] + ["", "a\nb"]
        base = [rng.choice(pool) for _ in range(rng.randint(0, 8))]
        new = [rng.choice(pool) for _ in range(rng.randint(0, 8))]
        if rng.random() < 0.5:
            base, new = list(dict.fromkeys(base)), list(dict.fromkeys(new))
        roll = rng.random()
        if roll < 0.5 and base:  # one run of the base replaced
            i = rng.randrange(len(base))
            j = rng.randrange(i, len(base) + 1)
            new = base[:i] + [x for x in new if x not in base][: rng.randint(0, 3)] + base[j:]
        elif roll < 0.8 and base:  # runs replaced here and there, the rest kept (or moved)
            others = [x for x in new if x not in base]
            new = []
            for x in base:
                if rng.random() < 0.3:
                    n = rng.randint(0, 2)
                    new += others[:n]
                    others = others[n:]
                if rng.random() < 0.8:
                    new.append(x)
            if rng.random() < 0.2 and len(new) > 1:
                new[0], new[-1] = new[-1], new[0]
        text = "\n".join(base)
        assert legal_edit_joined(text, new, "\n") == legal_edit(text.split("\n"), new), (base, new)
        if _plain(new):  # an engine's promise (plain_notation): the same splices
            assert legal_edit_joined(text, new, "\n", plain=True) == legal_edit(text.split("\n"), new), (base, new)


def test_the_joined_base_edit_is_legal_edit_with_changes_spread_over_the_list() -> None:
    """Lists mostly kept, with entries removed and added at several places (what
    legal_edit_joined works out between the unchanged ends), sometimes one moved or
    repeated, sometimes mostly new."""
    rng = random.Random(5)
    pool = [f"m{i}" for i in range(200)]
    for _ in range(5_000):
        base = rng.sample(pool, rng.randint(1, 40))
        others = [x for x in pool if x not in base]
        rng.shuffle(others)
        new: list[str] = []
        rate = rng.choice([0.05, 0.3, 0.9])
        for x in base:
            if rng.random() < rate:
                n = rng.randint(0, 3)
                new += others[:n]
                others = others[n:]
            if rng.random() > rate / 2:
                new.append(x)
        if rng.random() < 0.3 and len(base) > 4:  # or: two runs gone around a kept block
            i, j, m = sorted(rng.sample(range(len(base) + 1), 3))
            new = base[:i] + base[j:m] + base[m + rng.randint(1, 3):] if rng.random() < 0.5 else base[j:m]
        if rng.random() < 0.1 and len(new) > 2:
            new.insert(rng.randrange(len(new)), new.pop(rng.randrange(len(new))))  # moved
        if rng.random() < 0.1:
            (base if rng.random() < 0.5 else new).append(rng.choice(base))  # repeated
        text = "\n".join(base)
        assert legal_edit_joined(text, new, "\n") == legal_edit(base, new), (base, new)
        if _plain(new):  # a Giantslayer or Causeway seat's base (not known distinct) and list
            assert legal_edit_joined(text, new, "\n", plain=True) == legal_edit(base, new), (base, new)


@pytest.mark.parametrize("odd", ["a\nb", "\nb", "a\n", "\n", "\n\n"])
def test_an_entry_holding_the_separator_anywhere_is_edited_as_legal_edit_does(odd: str) -> None:
    """A separator at an entry's start, end or alone (the joined text then reads as
    other entries): the plain rule's answer, whatever the joined texts share."""
    base = ["m1", "m2", "m3", "m4"]
    for new in (["m1", odd, "m3", "m4"], ["m1", "m2", "m3", odd], [odd, "m2", "m3", "m4"], [odd], ["m1", "m4", odd]):
        text = "\n".join(base)
        assert legal_edit_joined(text, new, "\n") == legal_edit(text.split("\n"), new), new


@pytest.mark.parametrize(("game", "rules"), [("giants", None), ("giantslayer", None), ("causeway", "barrier")])
def test_the_joined_base_edit_is_legal_edit_in_real_games(game: str, rules: str | None) -> None:
    """Each seat's next list in random games: GIANTS (bids GI-8, placement GI-12..GI-17,
    transport GI-18..GI-24; mostly one run changed), Giantslayer and Causeway's barrier
    rules (a piece's moves at several places in the list): the same splices as
    legal_edit on the split base."""
    engine = registry.get_engine(game, rules)
    for seed in range(4):
        rng = random.Random(seed)
        state = engine.new_game(2, {}, seed)
        last: dict[int, list[str]] = {}
        for _ in range(250):
            if engine.outcome(state) is not None:
                break
            seat = min(engine.waiting_for(state))
            legal = engine.legal_notation(state, seat)
            if seat in last:
                text = "\n".join(last[seat])
                assert legal_edit_joined(text, legal, "\n") == legal_edit(last[seat], legal)
                # the engines' lists repeat no entry: the server's fast path may take them
                assert legal_edit_joined(text, legal, "\n", distinct=True) == legal_edit(last[seat], legal)
                if engine.plain_notation:  # what the server then passes (server.legal_lists)
                    assert legal_edit_joined(text, legal, "\n", distinct=True, plain=True) == legal_edit(last[seat], legal)
                    assert legal_edit_joined(text, legal, "\n", plain=True) == legal_edit(last[seat], legal)
            last[seat] = legal
            state = engine.apply_text(state, seat, rng.choice(legal)).state


def _plain(new: list[str]) -> bool:
    """`new` as an engine with Engine.plain_notation lists: no repeat, no separator."""
    return len(set(new)) == len(new) and not any("\n" in x for x in new)


def test_the_distinct_base_path_is_legal_edit_for_removals_and_everything_else() -> None:
    """legal_edit_joined(distinct=True), for a base that repeats no entry (what the server
    flags): entries removed in one run, in two around a kept block, in several places,
    none; entries added or moved; the separator inside an entry of the new list (also
    where the joined text then reads as the base with a run removed); empty entries. The
    same splices (or None) as legal_edit on the split base, with `text` given or not, and
    for a new list that repeats no entry and holds no separator, with `plain` too."""
    rng = random.Random(6)
    pool = [f"m{i}" for i in range(60)] + ["", "x"]
    for _ in range(20_000):
        base = rng.sample(pool, rng.randint(1, 30))
        roll = rng.random()
        i, j, m = sorted(rng.choices(range(len(base) + 1), k=3))
        if roll < 0.3:  # one run gone
            new = base[:i] + base[j:]
        elif roll < 0.55:  # two runs gone around a kept block
            new = base[:i] + base[j:m] + base[m + rng.randint(0, 3):]
        elif roll < 0.65:  # entries gone here and there
            new = [x for x in base if rng.random() < 0.7]
        elif roll < 0.75:  # a run replaced
            new = base[:i] + rng.sample([x for x in pool if x not in base] or ["y"], 1) + base[j:]
        elif roll < 0.85:  # a run gone, and two kept entries read as one holding the separator
            new = base[:i] + base[j:]
            if len(new) > 1:
                at = rng.randrange(len(new) - 1)
                new[at:at + 2] = [f"{new[at]}\n{new[at + 1]}"]
        elif roll < 0.9:  # moved
            new = list(base)
            new.insert(rng.randrange(len(new) + 1), new.pop(rng.randrange(len(new))))
        elif roll < 0.95:  # repeated
            new = base[:i] + base[j:] + [rng.choice(base)]
        else:
            new = list(base)
        text = "\n".join(base)
        want = legal_edit(base, new)
        assert legal_edit_joined(text, new, "\n", distinct=True) == want, (base, new)
        assert legal_edit_joined(text, new, "\n", "\n".join(new), True) == want, (base, new)
        if _plain(new):  # what an engine with Engine.plain_notation hands the server
            assert legal_edit_joined(text, new, "\n", distinct=True, plain=True) == want, (base, new)
            assert legal_edit_joined(text, new, "\n", plain=True) == want, (base, new)


def test_the_distinct_base_one_run_path_is_legal_edit_on_long_lists() -> None:
    """legal_edit_joined(distinct=True)'s one-run path (probes at the first and last
    entries, a halving search over kilobytes of text, the run tested against the base's
    end): long lists like a GIANTS seat's placements (GI-12..GI-17), one run gone at the
    start, the end, just before the last entry, anywhere; entries sharing long prefixes,
    empty entries, the separator inside an entry; also two runs, additions, the base
    unchanged. The same splices (or None) as legal_edit on the split base."""
    rng = random.Random(7)
    for _ in range(3_000):
        stem = rng.choice(["", "place worker ", "place sorcerer (4,0) logs "])
        pool = [f"{stem}({i % 13},{i // 13})" for i in range(rng.randint(1, 400))] + ["", "pass", "tablet"]
        base = rng.sample(pool, rng.randint(1, min(len(pool), 300)))
        n = len(base)
        i = rng.choice([0, 1, n - 1, n, rng.randint(0, n)])
        j = rng.choice([i, n, n - 1, rng.randint(i, n)])
        j = max(i, min(j, n))
        new = base[:i] + base[j:]
        roll = rng.random()
        if roll < 0.1 and len(new) > 1:  # two kept entries read as one holding the separator
            at = rng.randrange(len(new) - 1)
            new[at:at + 2] = [f"{new[at]}\n{new[at + 1]}"]
        elif roll < 0.2 and new:  # an entry changed at its end (a common prefix within it)
            at = rng.randrange(len(new))
            new[at] += "x"
        elif roll < 0.3 and len(new) > 3:  # a second run gone
            at = rng.randrange(1, len(new) - 1)
            del new[at:at + rng.randint(1, 3)]
        elif roll < 0.35:
            new = list(base)
        if not new:
            continue
        text = "\n".join(base)
        want = legal_edit(base, new)
        assert legal_edit_joined(text, new, "\n", "\n".join(new), True) == want, (base, new)
        if _plain(new):
            assert legal_edit_joined(text, new, "\n", "\n".join(new), True, True) == want, (base, new)
