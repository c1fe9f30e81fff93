// Events and outcomes in words, for the event log and the result screen.

function who(names, seat) {
  return seat === null || seat === undefined ? "someone" : names[seat] ?? `seat ${seat + 1}`;
}

/** One line for an event (docs/protocol.md §5), or null for one not worth a line. */
export function describeEvent(event, names) {
  switch (event.type) {
    case "action":
      return `${who(names, event.seat)}: ${event.action}`;
    case "timeout":
      return `${who(names, event.seat)} ran out of time`;
    case "joined":
      return `${event.name ?? who(names, event.seat)} took seat ${event.seat + 1}`;
    case "left":
      return `${who(names, event.seat)} left`;
    case "started":
      return "The game started";
    case "finished":
      return "The game is over";
    case "resigned":
      return `${who(names, event.seat)} resigned`;
    case "aborted":
      return `${who(names, event.seat)} aborted the game`;
    case "draw_offered":
      return `${who(names, event.seat)} offers a draw`;
    case "draw_accepted":
      return `${who(names, event.seat)} accepted the draw`;
    case "draw_declined":
      return `${who(names, event.seat)} declined the draw`;
    default: {
      // An engine's own event: its type and its scalar fields, readable enough.
      const parts = Object.entries(event)
        .filter(([k, v]) => k !== "type" && (typeof v !== "object" || v === null))
        .map(([k, v]) => (k === "seat" ? who(names, v) : `${k} ${v}`));
      return `${event.type.replace(/_/g, " ")}${parts.length ? `: ${parts.join(", ")}` : ""}`;
    }
  }
}

/** The result in one sentence, from `me`'s point of view when seated. */
export function outcomeText(outcome, names, me) {
  const winners = outcome.winners ?? [];
  const scores = (outcome.scores ?? []).map((s, i) => `${who(names, i)} ${s}`).join(", ");
  let head;
  if (outcome.reason === "aborted" || outcome.reason === "expired") head = "No result.";
  else if (winners.length === 0 || winners.length === names.length) head = "Draw.";
  else if (me !== null && winners.includes(me)) head = "You win!";
  else head = `${winners.map((s) => who(names, s)).join(" and ")} win${winners.length === 1 ? "s" : ""}.`;
  const reason = outcome.detail || outcome.reason;
  return `${head}${reason ? ` ${reason}.` : ""}${scores ? ` Scores: ${scores}.` : ""}`.replace(/\.\./g, ".");
}
