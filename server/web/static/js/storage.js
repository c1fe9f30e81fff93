// Seat tokens and small preferences in localStorage, per server (host) and room, so
// reloading the page or reopening a room's link resumes the seat.

const PREFIX = "giants-table";

function key(...parts) {
  return [PREFIX, location.host, ...parts].join("|");
}

function read(k) {
  try {
    const raw = localStorage.getItem(k);
    return raw === null ? null : JSON.parse(raw);
  } catch {
    return null; // storage disabled or a value this version cannot read
  }
}

function write(k, value) {
  try {
    if (value === null) localStorage.removeItem(k);
    else localStorage.setItem(k, JSON.stringify(value));
  } catch {
    // storage full or disabled: the seat lasts as long as this page
  }
}

/** {token, seat} of this browser's seat in `room`, or null. */
export const getSeat = (room) => read(key("seat", room));
export const setSeat = (room, seat, token) => write(key("seat", room), { seat, token });
export const forgetSeat = (room) => write(key("seat", room), null);

export const getName = () => read(key("name"));
export const setName = (name) => write(key("name"), name || null);
