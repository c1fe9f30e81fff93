"""`islander`: a GIANTS bot that bids, places, transports and erects sensibly.

It reads only its own seat's view (its screen, the public board, the offer, who has
bid) and its legal actions; it never rebuilds a game state, so hidden information
cannot reach it. Each legal action is scored by a rule of thumb and the best is
played (ties at random):

- auction: bid the sculptors that can carry what is on offer (the chief alone for a
  big Moai), keeping workers home for transport, with one marker when the offer is rich;
- claims: the largest Moai it can pay for;
- placement: reserve an Ahu with the sorcerer, then put figures on the shortest path
  from its Moai (or the quarry) to that Ahu, which is where strength is needed;
- transport: erect when possible, else move its statues closer to its Ahu.

The island map is public rules data (`engines.giants.board.ISLAND`).
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable
from typing import Any

from engines.base import View
from engines.bots.base import Bot

Hex = tuple[int, int]
_HEX = re.compile(r"\((-?\d+),(-?\d+)\)")


def _hexes(text: str) -> list[Hex]:
    return [(int(c), int(r)) for c, r in _HEX.findall(text.replace(" ", ""))]


def _cell(key: str) -> Hex:
    col, row = key.split(",")
    return (int(col), int(row))


def _key(cell: Hex) -> str:
    return f"{cell[0]},{cell[1]}"


class IslanderBot(Bot):
    name = "islander"
    description = "GIANTS: sensible bids, Ahu reservations, worker paths, transport and erection"
    games = frozenset({"giants"})

    def setup(self) -> None:
        from engines.giants.board import ISLAND

        self.island = ISLAND

    # ------------------------------------------------------------------ map helpers

    def _distances(self, goals: Iterable[Hex]) -> dict[Hex, int]:
        """Land distance from every hex to the nearest goal hex (BFS over land)."""
        dist: dict[Hex, int] = {}
        queue: deque[Hex] = deque()
        for goal in goals:
            if goal not in dist:
                dist[goal] = 0
                queue.append(goal)
        while queue:
            cell = queue.popleft()
            for near in self.island.neighbors[cell]:
                if near not in dist:
                    dist[near] = dist[cell] + 1
                    queue.append(near)
        return dist

    def _path(self, start: Hex, dist: dict[Hex, int]) -> list[Hex]:
        """A shortest land path from `start` down the distance field (start excluded)."""
        path: list[Hex] = []
        cell = start
        while dist.get(cell, 0) > 0:
            cell = min(self.island.neighbors[cell], key=lambda n: (dist.get(n, 99), n))
            path.append(cell)
        return path

    # ------------------------------------------------------------------ reading the view

    def _plan(self, view: View) -> dict[str, Any]:
        """Where this seat wants its statues to go, and the hexes that need strength."""
        me = self.context.seat
        ahu: dict[str, Any] = view.get("ahu", {})
        mine = [aid for aid, a in ahu.items() if a.get("reserved") == me and not a.get("moai")]
        free = [aid for aid, a in ahu.items() if a.get("reserved") is None and not a.get("moai")]
        targets = mine or free
        goals = [cell for aid in targets for cell in self.island.ahu_by_id[aid].adjacent]
        dist = self._distances(goals) if goals else {}
        statues = view.get("statues", {})
        own = [
            s for s in statues.values()
            if str(s.get("kind", "")).lower() in ("m", "moai") and (s.get("front") == me or s.get("marker") == me)
        ]
        starts = [_cell(s["hex"]) for s in own]
        start: Hex = min(starts, key=lambda c: dist.get(c, 99)) if starts else self.island.quarry
        path = self._path(start, dist) if dist else []
        return {"dist": dist, "path": path, "targets": set(targets), "mine": set(mine), "has_statue": bool(own)}

    # ------------------------------------------------------------------ choosing

    def choose(self, view: View, legal: list[str]) -> str:
        plan = self._plan(view)
        best: list[str] = []
        best_score = float("-inf")
        for text in legal:
            if best and self.stopped():
                break  # out of time: the best action seen so far
            score = self._score(text, view, plan)
            if score > best_score + 1e-9:
                best, best_score = [text], score
            elif abs(score - best_score) <= 1e-9:
                best.append(text)
        return self.rng.choice(best)

    def _score(self, text: str, view: View, plan: dict[str, Any]) -> float:
        words = text.split()
        kind = words[0].lower() if words else "pass"
        scorer = getattr(self, f"_score_{kind}", None)
        return float(scorer(words, text, view, plan)) if scorer else 0.0

    def _score_pass(self, words: list[str], text: str, view: View, plan: dict[str, Any]) -> float:
        return 0.0

    def _score_bid(self, words: list[str], text: str, view: View, plan: dict[str, Any]) -> float:
        markers = int(words[1]) if len(words) > 1 and words[1].isdigit() else 0
        workers = sum(int(w[1:] or 1) for w in words[2:] if w.lower().startswith("w"))
        chief = any(w.lower() == "c" for w in words[2:])
        offer = view.get("offer", {})
        sizes = sorted(
            (int(size) for size, count in offer.items() for _ in range(int(count or 0))), reverse=True
        )
        if not sizes:
            return 1.0 if markers == workers == 0 and not chief else -markers - workers - 2 * chief
        carried = 0
        rest = list(sizes)
        if chief:
            carried += rest.pop(0)  # the chief sculpts the largest alone
        budget = workers
        for size in rest:
            if size <= budget:
                carried += size
                budget -= size
        wasted = budget + (1 if chief and not sizes else 0)
        rich = sizes[0] >= 2 or len(sizes) >= 3
        marker_value = (2.0 if markers == 1 and rich else 0.0) - 1.5 * max(0, markers - 1)
        # Workers bid cannot carry statues on the board this turn (GI-11).
        return 3.0 * carried - 1.5 * wasted - 0.8 * workers + marker_value

    def _score_claim(self, words: list[str], text: str, view: View, plan: dict[str, Any]) -> float:
        size = int(words[1]) if len(words) > 1 and words[1].isdigit() else 1
        return 10.0 * size + (0.5 if "chief" in text else 0.0)

    def _hex_value(self, cell: Hex, plan: dict[str, Any], view: View) -> float:
        """How useful a figure on `cell` is: on the path of its statue, or beside its Ahu."""
        me = self.context.seat
        tokens = view.get("board", {}).get(_key(cell), {})
        covered = sum(count[0] if isinstance(count, list) else int(count)
                      for token, count in tokens.items() if token.endswith(str(me)) and token[0] in "wsc")
        path: list[Hex] = plan["path"]
        if cell in path and covered == 0:
            return 16.0 - path.index(cell) * (1.0 if plan["has_statue"] else 2.0)
        if plan["dist"].get(cell) == 0 and covered == 0:
            return 10.0  # a worker beside the Ahu is needed to erect (GI-20)
        return -float(plan["dist"].get(cell, 20)) * 0.5 - covered

    def _score_place(self, words: list[str], text: str, view: View, plan: dict[str, Any]) -> float:
        cells = _hexes(text)
        if not cells:
            return 0.5
        figure = words[1].lower() if len(words) > 1 else "worker"
        logs = int(words[-1]) if "logs" in text and words[-1].isdigit() else 0
        value = self._hex_value(cells[0], plan, view) + 0.5 * logs
        if figure == "chief":
            value *= 1.3  # strength 3 carries any Moai alone
        elif figure == "sorcerer":
            value -= 4.0  # the sorcerer is worth more on a special hex
        return value

    def _score_sorcerer(self, words: list[str], text: str, view: View, plan: dict[str, Any]) -> float:
        power = words[1].lower() if len(words) > 1 else ""
        screen = view.get("screen", {})
        me = str(self.context.seat)
        if power == "reserve":
            aid = words[2].upper() if len(words) > 2 else ""
            ahu = self.island.ahu_by_id.get(aid)
            if ahu is None or plan["mine"] or not screen.get("bases"):
                return 1.0
            near_quarry = self._distances(ahu.adjacent).get(self.island.quarry, 20)
            return 20.0 + ahu.moai_value - 1.5 * near_quarry
        if power == "village":
            reserve = view.get("seats", {}).get(me, {}).get("reserve_workers", 1)
            return 14.0 if reserve else 0.0
        if power == "hut":
            return 8.0
        if power == "forest":
            cells = _hexes(text)
            logs = view.get("forests", {}).get(_key(cells[0]), 0) if cells else 0
            return 4.0 + 0.5 * float(logs)
        if power == "clay":
            return 3.0
        return 1.0

    def _score_chief(self, words: list[str], text: str, view: View, plan: dict[str, Any]) -> float:
        return self._score_sorcerer(words, text, view, plan) - 10.0  # costs 2 half-tablets

    def _score_tablet(self, words: list[str], text: str, view: View, plan: dict[str, Any]) -> float:
        return 2.0

    def _score_neutral(self, words: list[str], text: str, view: View, plan: dict[str, Any]) -> float:
        cells = _hexes(text)
        return (self._hex_value(cells[-1], plan, view) - 6.0) if cells else 0.0

    def _score_transport(self, words: list[str], text: str, view: View, plan: dict[str, Any]) -> float:
        statue = view.get("statues", {}).get(words[1] if len(words) > 1 else "", {})
        cells = _hexes(text)
        if not cells:
            return 0.0
        dist: dict[Hex, int] = plan["dist"]
        before = dist.get(cells[0], 20)
        after = dist.get(cells[-1], 20)
        me = self.context.seat
        owned = statue.get("front") == me or statue.get("marker") == me
        gain = float(before - after)
        if gain <= 0:
            return -1.0
        size = int(statue.get("size") or 1)
        return (30.0 if owned else 12.0) + 6.0 * gain + size + (8.0 if after == 0 else 0.0)

    def _score_erect(self, words: list[str], text: str, view: View, plan: dict[str, Any]) -> float:
        aid = words[2].upper() if len(words) > 2 else ""
        statue = view.get("statues", {}).get(words[1] if len(words) > 1 else "", {})
        ahu = self.island.ahu_by_id.get(aid)
        value = ahu.moai_value if ahu else 1
        return 100.0 + value * int(statue.get("size") or 1)

    def _score_headdress(self, words: list[str], text: str, view: View, plan: dict[str, Any]) -> float:
        aid = words[2].upper() if len(words) > 2 else ""
        ahu = self.island.ahu_by_id.get(aid)
        owner = view.get("ahu", {}).get(aid, {}).get("owner")
        mine = owner == self.context.seat
        return 60.0 + (ahu.headdress_value if ahu else 1) if mine else 5.0

    def _score_mark(self, words: list[str], text: str, view: View, plan: dict[str, Any]) -> float:
        statue = view.get("statues", {}).get(words[1] if len(words) > 1 else "", {})
        if str(statue.get("kind", "")).lower() not in ("m", "moai"):
            return 1.0
        cells = [_cell(statue["hex"])] if statue.get("hex") else []
        near = plan["dist"].get(cells[0], 20) if cells else 20
        return 15.0 - near if statue.get("front") == self.context.seat else 6.0 - near

    def _score_look(self, words: list[str], text: str, view: View, plan: dict[str, Any]) -> float:
        return -5.0

    def _score_release(self, words: list[str], text: str, view: View, plan: dict[str, Any]) -> float:
        return -1.0
