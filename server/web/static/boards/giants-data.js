// The GIANTS island (a copy of engines/giants/map.json; a test keeps them equal) and the
// names of the pieces, shared by the map and the panels.

export const MAP = await fetch(new URL("./giants-map.json", import.meta.url)).then((r) => r.json());

/** "w1" -> "seat 1's worker", "l" -> "log", "n2" -> "neutral worker with seat 2's marker";
 * `name(seat)` may give the seat's display name instead of "seat N". */
export function describeToken(token, name) {
  const kind = { w: "worker", s: "sorcerer", c: "chief", n: "neutral worker", l: "log" }[token[0]];
  if (token.length === 1) return token === "n" ? "unmarked neutral worker" : kind;
  const seat = Number(token.slice(1));
  const owner = name ? name(seat) : `seat ${seat}`;
  return token[0] === "n" ? `neutral worker with ${owner}'s marker` : `${owner}'s ${kind}`;
}
