// The prefix picker: turns a list of legal actions into click targets, step by step.
//
// Each board tokenizes every legal action text into a sequence of parts
// ({key, target, label, confirm}); the picker knows nothing about any game. It keeps
// the parts chosen so far (the prefix) and offers the distinct next parts of the
// actions that still match. When the prefix is a whole action and nothing longer
// matches, the action is ready to send. No rules are checked here: the server's legal
// list is the only source of what may be played.
//
//   key     identifies the part at its position (two actions share a step when their
//           keys agree); it is never shown.
//   target  the id of the thing on the board (or in a panel) that chooses this part,
//           e.g. "e5" or "statue:M7"; null when the part is chosen by a button.
//   label   what a button or a menu entry says.
//   confirm true when choosing the previous part must not auto-choose this one even
//           if it is the only way on (a "Transport" button after a destination).

export class Picker {
  constructor() {
    this.actions = [];
    this.prefix = [];
    this.signature = null;
  }

  /** Replace the legal actions; keep the prefix only while some action still matches it. */
  sync(actions, signature) {
    this.actions = actions;
    if (signature !== this.signature) {
      this.signature = signature;
      if (!this.prefix.length || !this.candidates().length) this.prefix = [];
      while (this.prefix.length && !this.candidates().length) this.prefix.pop();
    }
  }

  /** Actions whose first parts are the chosen prefix. */
  candidates() {
    const n = this.prefix.length;
    return this.actions.filter(
      (a) => a.tokens.length >= n && this.prefix.every((k, i) => a.tokens[i].key === k),
    );
  }

  /** The action the prefix spells out completely, or null. */
  complete() {
    const n = this.prefix.length;
    if (!n) return null;
    return this.candidates().find((a) => a.tokens.length === n) || null;
  }

  /** The distinct next parts, in the order of the legal list: [{key, target, label, confirm, actions}]. */
  options() {
    const n = this.prefix.length;
    const out = new Map();
    for (const a of this.candidates()) {
      if (a.tokens.length <= n) continue;
      const t = a.tokens[n];
      let o = out.get(t.key);
      if (!o) {
        o = { ...t, actions: [] };
        out.set(t.key, o);
      }
      o.actions.push(a);
    }
    return [...out.values()];
  }

  /** The chosen parts themselves (for highlighting what is selected). */
  chosen() {
    const c = this.candidates()[0];
    return c ? c.tokens.slice(0, this.prefix.length) : [];
  }

  /**
   * Choose the next part `key`; then follow single button-only continuations.
   * Returns the action text when the prefix became a whole action with nothing longer.
   */
  choose(key) {
    this.prefix.push(key);
    for (;;) {
      const done = this.complete();
      const opts = this.options();
      if (done && !opts.length) return done.text;
      if (!done && opts.length === 1 && opts[0].target == null && !opts[0].confirm) {
        this.prefix.push(opts[0].key);
        continue;
      }
      return null;
    }
  }

  back() {
    this.prefix.pop();
  }

  reset() {
    this.prefix = [];
  }
}
