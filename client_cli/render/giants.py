"""GIANTS: the island map, the offer, the screens (yours only), scores and who has bid.

The map is drawn in its odd-r offset coordinates (odd rows shifted half a hex right):
`Q` quarry, `C` clay pit, `V` village, `H` sorcerers' hut, `f6` a forest with 6
logs (`f-` exhausted), `.` empty land, `01`..`20` the Ahu in the sea; a hex with
pieces shows its first figure and seat (`w1`), the same on every screen, and is
listed by (column,row) under the map. Column numbers run above and below it. Everything shown
comes from the seat's view, so another seat's screen or bid never appears here. A seat's
Moai points (GI-27: its erected Moai, whose owners are hidden, GI-28) are summed from the
Ahu whose `owner` its view holds: shown to that seat only, and to all after the end.
"""

from __future__ import annotations

from typing import Any

from engines.giants.board import ISLAND

FIGURE_NAMES = {"w": "worker", "s": "sorcerer", "c": "chief", "n": "neutral", "l": "log"}


def _key(cell: tuple[int, int]) -> str:
    return f"{cell[0]},{cell[1]}"


def _tokens(tokens: dict[str, Any]) -> str:
    parts = []
    for token, value in sorted(tokens.items()):
        count = value[0] if isinstance(value, list) else int(value)
        kind = FIGURE_NAMES.get(token[0], token)
        owner = f" of seat {token[1:]}" if token[1:] else ""
        parts.append(f"{count} {kind}{'s' if count != 1 else ''}{owner}")
    return ", ".join(parts)


def _cell_mark(pieces: dict[str, Any], statues_here: list[str]) -> str:
    """What an occupied hex shows on the map: a function of its contents only, so a hex
    looks the same on every screen. The first figure and its seat (`w1` a worker of
    seat 1, `s0`, `c2`, `n` neutral, `l` logs), `+` when more is there; `m` statues."""
    if pieces:
        first = sorted(pieces)[0]
        mark = first[0] + first[1:2]
        return mark + ("+" if len(pieces) > 1 or statues_here else "")
    return "m"


AHU_VALUES = {ahu.id: (ahu.moai_value, ahu.headdress_value) for ahu in ISLAND.ahu}


def moai_points(view: dict[str, Any], seat: int) -> int:
    """GI-27: what `seat`'s erected Moai score, from the Ahu whose owner the view shows
    (its own before the end, every one after it): size x the Ahu's Moai value, plus the
    headdress value when it wears one."""
    total = 0
    for aid, entry in view.get("ahu", {}).items():
        if entry.get("moai") and entry.get("owner") == seat and aid in AHU_VALUES:
            moai_value, headdress_value = AHU_VALUES[aid]
            total += entry["moai"] * moai_value + (headdress_value if entry.get("headdress") else 0)
    return total


def _draw_map(view: dict[str, Any]) -> tuple[list[str], list[str]]:
    board: dict[str, dict[str, Any]] = view.get("board", {})
    statues: dict[str, dict[str, Any]] = view.get("statues", {})
    forests: dict[str, int] = view.get("forests", {})
    at_hex: dict[str, list[str]] = {}
    for sid, st in sorted(statues.items(), key=lambda kv: (len(kv[0]), kv[0])):
        if st.get("front") is None and st.get("hex"):
            at_hex.setdefault(st["hex"], []).append(sid)
    special = {_key(ISLAND.quarry): "Q", _key(ISLAND.clay_pit): "C",
               _key(ISLAND.village): "V", _key(ISLAND.hut): "H"}
    grid: dict[tuple[int, int], str] = {}
    legend: list[str] = []
    for cell in sorted(ISLAND.land_order, key=lambda c: (c[1], c[0])):
        key = _key(cell)
        pieces = {t: v for t, v in board.get(key, {}).items() if (v[0] if isinstance(v, list) else v)}
        here = at_hex.get(key, [])
        base = special.get(key)
        if base is None and key in forests:
            base = f"f{forests[key]}" if forests[key] else "f-"
        # Statues waiting at the quarry / clay pit are listed there, not marked.
        if pieces or (here and key not in special):
            grid[cell] = _cell_mark(pieces, here)
            what = []
            if base:
                what.append(base)
            if pieces:
                what.append(_tokens(pieces))
            if here:
                what.append("statues " + " ".join(here))
            legend.append(f"  ({cell[0]},{cell[1]}): " + "; ".join(what))
        else:
            grid[cell] = base or "."
    for ahu in ISLAND.ahu:
        grid[ahu.hex] = ahu.id[1:]
    rows = sorted({r for _, r in grid})
    cols = sorted({c for c, _ in grid})
    left = cols[0]
    # Column numbers above and below the map, over the even rows' cells (odd rows sit
    # half a hex to the right), so a hex's (column,row) can be read off the screen.
    ruler = ""
    for col in cols:
        ruler = ruler.ljust((col - left) * 4) + str(col)
    lines = [f"    {ruler}"]
    for row in rows:
        line = ""
        for col in sorted(c for c, r in grid if r == row):
            x = (col - left) * 4 + (2 if row % 2 else 0)
            line = line.ljust(x) + grid[(col, row)]
        lines.append(f"{row:>2}  {line.rstrip()}")
    lines.append(f"    {ruler}")
    return lines, legend


def render(view: dict[str, Any], seat: int | None = None) -> str:
    me = view.get("you", seat)
    lines, legend = _draw_map(view)
    phase = view.get("phase", "?")
    offer = view.get("offer", {})
    stock = view.get("stock", {})
    head = [
        f"GIANTS - turn {view.get('turn')}, phase {phase}; first player seat {view.get('first')}",
        "Offer: " + ", ".join(f"{offer.get(s, 0)} of size {s}" for s in ("1", "2", "3"))
        + f"   (stock {stock.get('1', 0)}/{stock.get('2', 0)}/{stock.get('3', 0)}; dice {view.get('dice', [])})",
        f"Supply: {view.get('tablets')} half-tablets, {view.get('headdresses')} headdresses"
        + (f", {view.get('neutrals')} neutral workers" if view.get("players") == 2 else ""),
    ]
    seats: dict[str, dict[str, Any]] = view.get("seats", {})
    head.append("")
    over = phase == "over"
    head.append("seat  transport  Moai    bid            front of screen           passed")
    for key in sorted(seats, key=int):
        info = seats[key]
        if phase == "auction":
            bid = "has bid" if info.get("bid_made") else "thinking"
        elif info.get("bid") is not None:
            markers, workers, chief = info["bid"]
            bid = f"{markers}m {workers}w" + (" +chief" if chief else "")
        else:
            bid = "-"
        front = f"{info.get('front_markers', 0)} markers, {info.get('front_workers', 0)} workers" + (
            ", chief" if info.get("front_chief") else "")
        mine = me is not None and int(key) == me
        you = " (you)" if mine else ""
        # Another seat's Moai points stay hidden until the end (GI-28), even where this
        # seat looked under one of its Moai.
        moai = str(moai_points(view, int(key))) if mine or over else "hidden"
        head.append(f"{key:>4}  {info.get('points', 0):>9}  {moai:>6}  {bid:<13}  {front:<24}  "
                    f"{'yes' if info.get('passed') else 'no'}{you}")
    if me is not None and not over and str(me) in seats:
        points, own = seats[str(me)].get("points", 0), moai_points(view, me)
        head.append(f"Your score now: {points} transport + {own} Moai = {points + own} "
                    "(your Moai points are hidden from the others until the end)")
    screen = view.get("screen")
    if screen:
        head.append("")
        head.append(
            f"Your screen: {screen.get('workers')} workers, chief {'yes' if screen.get('chief') else 'no'}, "
            f"sorcerer {'yes' if screen.get('sorcerer') else 'no'}, {screen.get('markers')} markers, "
            f"{screen.get('tablets')} half-tablets, {screen.get('logs')} logs, {screen.get('bases')} bases"
        )
        if view.get("my_bid") is not None and phase == "auction":  # revealed in the table after
            markers, workers, chief = view["my_bid"]
            head.append(f"Your sealed bid: {markers} markers, {workers} workers" + (", the chief" if chief else ""))
    statues = view.get("statues", {})
    fronts = [f"{sid} (size {st.get('size')}, seat {st['front']})" for sid, st in sorted(statues.items())
              if st.get("front") is not None]
    if fronts:
        head.append("In front of screens: " + ", ".join(fronts))
    marked = [f"{sid}->{st['marker']}" for sid, st in sorted(statues.items()) if st.get("marker") is not None]
    if marked:
        head.append("Marked statues: " + ", ".join(marked))
    waiting = [sid for sid, st in sorted(statues.items(), key=lambda kv: (len(kv[0]), kv[0]))
               if st.get("front") is None and st.get("hex") in (_key(ISLAND.quarry), _key(ISLAND.clay_pit))]
    if waiting:
        head.append("At the quarry / clay pit: " + " ".join(
            f"{sid}({statues[sid].get('size')})" for sid in waiting))
    ahu_lines = []
    for aid, entry in sorted(view.get("ahu", {}).items()):
        bits = []
        if entry.get("reserved") is not None:
            bits.append(f"reserved by seat {entry['reserved']}")
        if entry.get("moai"):
            bits.append(f"Moai size {entry['moai']}" + (" + headdress" if entry.get("headdress") else ""))
            bits.append(f"owner seat {entry['owner']}" if "owner" in entry else "owner hidden")
        if bits:
            ahu_lines.append(f"  {aid}: " + ", ".join(bits))
    out = [*head, "", *lines]
    if legend:
        out += ["", "Pieces on the island:", *legend]
    if ahu_lines:
        out += ["", "Ahu:", *ahu_lines]
    out += ["", "Q quarry  C clay pit  V village  H hut  f6 forest (logs)  01-20 Ahu  w1 s0 c2 n l: "
            "worker/sorcerer/chief of that seat, neutral, logs (+ more there; m statues; listed above)",
            "Score = transport points (public) + Moai points: each of your erected Moai scores size x "
            "the Ahu's value (+ headdress); Moai owners, and so Moai points, stay hidden until the end."]
    return "\n".join(out)
