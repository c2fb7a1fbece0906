// The gateway's public API as the pages use it: JSON over HTTP, the WebSocket stream, and
// the seat tokens this browser holds. Nothing here asks for more than a seat (or a
// spectator, or an operator with their token) is given.

export class ApiError extends Error {
  constructor(status, body) {
    const err = (body && body.error) || {};
    super(err.message || `HTTP ${status}`);
    this.status = status;
    this.code = err.code || `http_${status}`;
    this.field = err.field;
  }
}

// retry: for a request that carries a command_id (a create, a join). It may have been done
// even though its answer was a 503 or never came (the table made, the seat taken): the same
// request again, the same command_id, gets the same table or the seat with a token, where
// giving up would leave a seat taken by nobody who holds it.
const RETRY_WAIT_MS = [250, 500, 1000, 2000, 2000];

export async function api(path, { method = "GET", token = null, body = undefined, retry = false } = {}) {
  const headers = {};
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const payload = body === undefined ? undefined : JSON.stringify(body);
  for (let attempt = 0; ; attempt++) {
    const last = !retry || attempt >= RETRY_WAIT_MS.length;
    let res;
    try {
      res = await fetch(path, { method, headers, body: payload });
    } catch (ex) {
      if (last) throw ex;
      await new Promise((r) => setTimeout(r, RETRY_WAIT_MS[attempt]));
      continue;
    }
    const text = await res.text();
    let data = null;
    try { data = text ? JSON.parse(text) : null; } catch { data = { error: { message: text } }; }
    if (res.status === 503 && !last) {
      await new Promise((r) => setTimeout(r, RETRY_WAIT_MS[attempt]));
      continue;
    }
    if (!res.ok) throw new ApiError(res.status, data);
    return data;
  }
}

// A join's command_id is what takes its seat's token again on a retry, so it must not be
// guessable: crypto.getRandomValues, which (unlike crypto.randomUUID) pages served over plain
// HTTP have too.
export function newId() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

// Seat tokens: localStorage "croupier:seats:<game_id>" = {"<seat>": {token, player, expires_at}}.
// Kept per table so a reload (or a second tab) finds the seat again; a browser may hold
// several seats of one table (hot seat), picked with ?seat=N on the table page.
const KEY = (gameId) => `croupier:seats:${gameId}`;

export function seatsHeld(gameId) {
  try {
    const all = JSON.parse(localStorage.getItem(KEY(gameId)) || "{}");
    const now = Date.now() / 1000;
    for (const [seat, held] of Object.entries(all)) {
      if (!held || !held.token || (held.expires_at && held.expires_at < now)) delete all[seat];
    }
    return all;
  } catch {
    return {};
  }
}

export function holdSeat(gameId, seat, joined, player) {
  const all = seatsHeld(gameId);
  all[String(seat)] = { token: joined.token, expires_at: joined.expires_at, player };
  localStorage.setItem(KEY(gameId), JSON.stringify(all));
}

// A token is renewed once it has less than this left (tokens live 12 h by default; a game
// with a long turn clock outlasts one). The renewed token holds the same seat.
const RENEW_BEFORE_S = 2 * 3600;

export async function renewIfDue(gameId, seat) {
  const held = seatsHeld(gameId)[String(seat)];
  if (!held || !held.expires_at || held.expires_at - Date.now() / 1000 > RENEW_BEFORE_S) return held ? held.token : null;
  const renewed = await api(`/v1/tables/${encodeURIComponent(gameId)}/seats/${seat}/renew`, { method: "POST", token: held.token });
  holdSeat(gameId, seat, renewed, held.player);
  return renewed.token;
}

export function dropSeat(gameId, seat) {
  const all = seatsHeld(gameId);
  delete all[String(seat)];
  if (Object.keys(all).length) localStorage.setItem(KEY(gameId), JSON.stringify(all));
  else localStorage.removeItem(KEY(gameId));
}

export async function joinSeat(gameId, seat, player) {
  const joined = await api(`/v1/tables/${encodeURIComponent(gameId)}/seats/${seat}`, {
    method: "POST", body: { player, entropy: newId(), command_id: newId() }, retry: true,
  });
  holdSeat(gameId, seat, joined, player);
  return joined;
}

// One viewer's stream: calls onUpdate({version, view, actions}) for every new version,
// reconnects after a drop from the last version it saw, and stops after the final view
// (close 1000). onStatus(text) reports the connection; onRefused(error) a refusal (4xxx).
export class Stream {
  constructor(gameId, token, seat, { onUpdate, onStatus = () => {}, onRefused = () => {} }) {
    this.gameId = gameId;
    this.token = token;
    this.seat = token ? seat : null;
    this.onUpdate = onUpdate;
    this.onStatus = onStatus;
    this.onRefused = onRefused;
    this.version = 0;
    this.closed = false;
    this.failures = 0;
    this.ws = null;
  }

  open() {
    if (this.closed) return;
    const proto = location.protocol === "https:" ? "wss" : "ws";
    const url = `${proto}://${location.host}/v1/tables/${encodeURIComponent(this.gameId)}/stream?from_version=${this.version}`;
    const ws = new WebSocket(url);
    this.ws = ws;
    let refused = null;
    ws.onopen = () => {
      // The token goes in the first message, not the URL (which servers may log).
      ws.send(JSON.stringify(this.token ? { token: this.token } : {}));
      this.onStatus("live");
    };
    ws.onmessage = (e) => {
      let m;
      try { m = JSON.parse(e.data); } catch { return; }
      if (m.error) { refused = m.error; return; }
      if (m.view && (m.view.you ?? null) !== this.seat) {
        // The gateway waits only briefly for the token message; one that came too late got a
        // spectator's stream. Open it again rather than show a seat a spectator's view.
        this.failures += 1;
        ws.close(1000);
        return;
      }
      this.failures = 0;
      if (typeof m.version === "number" && m.version > this.version) {
        this.version = m.version;
        this.onUpdate(m);
      }
    };
    ws.onclose = (e) => {
      if (this.ws !== ws) return;
      this.ws = null;
      if (this.closed) return;
      if (e.code === 1000 && this.failures === 0) { this.onStatus("ended"); return; }
      // token_too_late: the token message came after the gateway's short wait for it (a busy
      // browser): not a refusal of the seat, so open the stream again like a dropped one.
      const late = refused && refused.code === "token_too_late";
      if (e.code >= 4000 && e.code !== 4429 && e.code !== 4503 && !late) {
        this.onRefused(refused || { code: `ws_${e.code}`, message: `the stream was refused (${e.code})` });
        return;
      }
      this.failures += 1;
      this.onStatus("reconnecting");
      setTimeout(() => this.open(), Math.min(200 * 2 ** this.failures, 5000));
    };
  }

  close() {
    this.closed = true;
    if (this.ws) { const ws = this.ws; this.ws = null; ws.close(1000); }
  }
}
