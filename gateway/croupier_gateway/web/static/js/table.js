// The table page: /web/table.html?game=<id>[&seat=N]. A seat whose token this browser holds
// plays (its view and legal actions over the WebSocket); anyone else watches as a spectator.

import { ActionContext, actionList } from "./actions.js";
import { ApiError, Stream, api, dropSeat, joinSeat, newId, renewIfDue, seatsHeld } from "./api.js";
import { clear, facts, h } from "./dom.js";
import { renderGame } from "./games.js";

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const gameId = params.get("game") || "";

// What the page holds: only what the gateway sent this viewer. Exposed read-only for tests
// and the curious (window.croupierTable).
const state = { gameId, seat: null, token: null, version: 0, view: null, actions: [], busy: false,
  selected: null, over: false, connection: "connecting", announced: "" };
window.croupierTable = state;
let stream = null;

function chooseSeat() {
  const held = seatsHeld(gameId);
  const wanted = params.get("seat");
  if (wanted !== null && held[wanted]) return [Number(wanted), held[wanted].token];
  const seats = Object.keys(held);
  if (wanted === null && seats.length === 1) return [Number(seats[0]), held[seats[0]].token];
  return [null, null];
}

function start() {
  if (stream) stream.close();
  state.version = 0;
  stream = new Stream(gameId, state.token, state.seat, {
    onUpdate: (m) => update(m),
    onStatus: (s) => { state.connection = s; $("conn").textContent = s === "live" ? "live" : s; },
    onRefused: (err) => {
      if (state.token && ["unauthenticated", "forbidden"].includes(kindOf(err))) {
        // The seat was left or taken over: forget the token and watch instead.
        dropSeat(gameId, state.seat);
        showError(`Your seat token no longer works (${err.message}); watching as a spectator.`);
        state.seat = null; state.token = null;
        start();
        return;
      }
      showError(err.message || "The stream was refused.");
      $("conn").textContent = "refused";
    },
  });
  stream.open();
}

function kindOf(err) {
  if (err.kind) return err.kind;
  return { ws_4401: "unauthenticated", ws_4403: "forbidden" }[err.code] || "";
}

function update(m) {
  state.version = m.version;
  state.view = m.view;
  state.actions = m.actions || [];
  state.over = m.view.status === "over";
  if (state.selected && !new ActionContext(m.view.game_type, state.actions, null).count(state.selected.ref, state.selected.types)) {
    state.selected = null;
  }
  render();
  announce();
}

function announce() {
  const v = state.view;
  let text;
  if (v.status === "over") text = `Game over. ${resultText(v)}`;
  else if (v.status === "open") text = `Waiting for players: ${(v.seats || []).filter((s) => !s).length} seat(s) free.`;
  else if (state.seat !== null && state.actions.length) text = `Your turn: ${state.actions.length} possible move${state.actions.length > 1 ? "s" : ""}.`;
  else text = `Seat ${(v.to_act || []).join(" and ")} to act.`;
  if (text !== state.announced) { state.announced = text; $("status").textContent = text; }
}

function resultText(v) {
  const r = v.result;
  if (!r) return v.end_reason ? `Ended: ${v.end_reason}.` : "";
  const winners = r.winners ?? r.winner;
  const w = Array.isArray(winners) ? (winners.length ? `Winner: seat ${winners.join(", ")}.` : "No winner.") : "";
  const scores = Array.isArray(r.scores) ? ` Scores: ${r.scores.map((s, i) => `seat ${i} ${s}`).join(", ")}.` : "";
  return `${w}${scores}`.trim() || JSON.stringify(r);
}

function showError(text) {
  const el = $("error");
  el.textContent = text || "";
  el.hidden = !text;
}

// Keep keyboard focus on the same card or move across a re-render.
function focusKey(el) {
  if (!el || el === document.body) return null;
  if (el.id) return `#${el.id}`;
  if (el.dataset.action) return `[data-action='${CSS.escape(el.dataset.action)}']`;
  if (el.dataset.ref !== undefined) return `[data-ref='${CSS.escape(el.dataset.ref)}'][data-types='${CSS.escape(el.dataset.types || "")}'], [data-ref='${CSS.escape(el.dataset.ref)}']:not([data-types])`;
  return null;
}

function render() {
  const key = focusKey(document.activeElement);
  const v = state.view;
  if (!v) return;
  document.title = `${v.game_type} ${gameId} — Croupier`;
  $("title").textContent = `${v.game_type[0].toUpperCase()}${v.game_type.slice(1)} — table ${gameId}`;
  const ctx = new ActionContext(v.game_type, state.actions, state.selected, select);
  ctx.rawOpen = !!document.querySelector("#board details.raw[open]");
  renderWho(v);
  clear($("moves-body"));
  $("moves-h").textContent = state.seat === null ? "Moves" : "Your moves";
  if (state.seat === null) {
    $("moves-body").append(h("p", {}, "You are watching as a spectator: you see what any spectator sees, and no hidden card."));
  } else if (state.over) {
    $("moves-body").append(h("p", {}, "The game is over."));
  } else if (!state.actions.length) {
    $("moves-body").append(h("p", {}, v.status === "open" ? "The game starts when every seat is taken." : `Waiting for seat ${(v.to_act || []).join(" and ")}.`));
  } else {
    $("moves-body").append(h("p", { class: "hint" }, "Pick a highlighted card or space to see its moves, or choose a move below."),
      ...actionList(ctx, { onAct: act, busy: state.busy }));
  }
  $("moves-body").setAttribute("aria-busy", state.busy ? "true" : "false");
  clear($("table-facts")).append(facts([["Version", state.version], ["Status", v.status],
    ["To act", (v.to_act || []).length ? v.to_act.map((s) => `seat ${s}`).join(", ") : null],
    ["Seats", (v.seats || []).map((p, i) => `${i}: ${p ? p.player || "taken" : "free"}${p && p.bot ? ` (${p.bot})` : ""}`).join(" · ")],
    ["Seed hash", v.seed_hash], ["Seed", v.seed]]));
  clear($("board")).append(...renderGame(v, ctx));
  const res = $("result");
  res.hidden = !state.over;
  if (state.over) clear($("result-body")).append(h("p", {}, resultText(v)), facts([["End reason", v.end_reason]]));
  $("replay-link").href = `replay.html?game=${encodeURIComponent(gameId)}`;
  if (key) {
    const again = document.querySelector(key);
    if (again && again !== document.activeElement) again.focus();
  }
}

// A card or space picked (or unpicked): the move list shows its moves; say so, and on a
// narrow screen (the list is above the board) bring the list into view.
function select(sel) {
  state.selected = sel;
  render();
  if (!sel) return;
  const n = $("moves-body").querySelectorAll("button[data-action]").length;
  $("status").textContent = `${n} move${n === 1 ? "" : "s"} with this: see ${$("moves-h").textContent}.`;
  state.announced = "";
  if (window.matchMedia("(max-width: 899px)").matches) $("moves").scrollIntoView({ block: "nearest" });
}

function renderWho(v) {
  const body = clear($("who-body"));
  const held = seatsHeld(gameId);
  if (state.seat !== null) {
    body.append(h("p", {}, `You play seat ${state.seat}${v.seats?.[state.seat]?.player ? ` as ${v.seats[state.seat].player}` : ""}.`));
  } else {
    body.append(h("p", {}, "Watching as a spectator."));
  }
  const others = Object.keys(held).filter((s) => Number(s) !== state.seat);
  if (others.length) {
    body.append(h("p", {}, "This browser also holds: ", others.map((s) => h("a", { href: `?game=${encodeURIComponent(gameId)}&seat=${s}`, class: "pill" }, `seat ${s}`)),
      state.seat !== null ? [" · ", h("a", { href: `?game=${encodeURIComponent(gameId)}&seat=spectator`, class: "pill" }, "watch")] : null));
  }
  const free = (v.seats || []).map((p, i) => (p ? null : i)).filter((i) => i !== null);
  if (v.status === "open" && free.length) {
    const form = h("form", { class: "join", onsubmit: (e) => e.preventDefault() },
      h("label", { for: "player" }, "Your name "), h("input", { id: "player", name: "player", maxlength: 64, autocomplete: "nickname", value: localStorage.getItem("croupier:name") || "" }),
      free.map((seat) => h("button", { type: "button", onclick: () => join(seat) }, `Join seat ${seat}`)));
    body.append(form);
  }
}

async function join(seat) {
  const name = ($("player")?.value || "").trim() || `player ${seat}`;
  localStorage.setItem("croupier:name", name);
  try {
    const joined = await joinSeat(gameId, seat, name);
    state.seat = seat; state.token = joined.token;
    history.replaceState(null, "", `?game=${encodeURIComponent(gameId)}&seat=${seat}`);
    showError("");
    start();
  } catch (err) {
    showError(err.message);
  }
}

async function act(action) {
  if (state.busy || !state.token) return;
  state.busy = true;
  showError("");
  render();
  try {
    await api(`/v1/tables/${encodeURIComponent(gameId)}/commands`, {
      method: "POST", token: state.token, body: { command_id: newId(), expected_version: state.version, action },
    });
    state.selected = null;
  } catch (err) {
    if (err instanceof ApiError && err.status === 409) showError("The table moved on before your move; here is the new view.");
    else showError(err.message);
  } finally {
    state.busy = false;
    render();
  }
}

// Keep the seat's token alive for a long game: renewed when it nears its expiry. The open
// stream goes on (the old token holds the seat until it expires); moves and the stream's next
// connection use the new one.
async function keepToken() {
  if (state.seat === null || !state.token || state.over) return;
  try {
    const token = await renewIfDue(gameId, state.seat);
    if (token) {
      state.token = token;
      if (stream && stream.token) stream.token = token; // its next connection sends the new one
    }
  } catch (err) {
    console.warn("could not renew the seat token", err);
  }
}

async function main() {
  if (!gameId) { $("status").textContent = "No table given: open a table from the lobby."; return; }
  [state.seat, state.token] = chooseSeat();
  setInterval(keepToken, 5 * 60 * 1000);
  keepToken();
  $("title").textContent = `Table ${gameId}`;
  try {
    await api(`/v1/tables/${encodeURIComponent(gameId)}`);
  } catch (err) {
    $("status").textContent = err.message;
    return;
  }
  start();
}

main();
