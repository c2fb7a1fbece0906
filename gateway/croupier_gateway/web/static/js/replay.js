// The replay page: /web/replay.html?game=<id>. With the operator token: any game, as any
// seat, a spectator or every seat, with the audit verdict (the operator replay and audit
// routes), and a fork of the game at any step to play on. Without it: the player's replay
// route (a finished table, or your own seat).

import { ActionContext } from "./actions.js";
import { api, holdSeat, newId, seatsHeld } from "./api.js";
import { clear, facts, h } from "./dom.js";
import { renderGame } from "./games.js";

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const replay = { gameId: "", steps: [], lines: [], seats: 0, step: 0, viewer: "spectator", loaded: 0, shown: null };
window.croupierReplay = replay;
let ticket = 0;

function opToken() { return sessionStorage.getItem("croupier:operator") || ""; }

function playerToken(gameId) {
  const held = seatsHeld(gameId);
  const seat = Object.keys(held)[0];
  return seat === undefined ? null : held[seat].token;
}

function fail(text) {
  const el = $("error");
  el.textContent = text || "";
  el.hidden = !text;
}

function replayUrl(to, viewer) {
  const q = new URLSearchParams();
  if (to) q.set("to", String(to));
  if (viewer) q.set("as", viewer);
  const gid = encodeURIComponent(replay.gameId);
  return opToken() ? `/v1/operator/games/${gid}/replay?${q}` : `/v1/tables/${gid}/replay?${q}`;
}

function token() { return opToken() || playerToken(replay.gameId); }

async function load(e) {
  if (e) e.preventDefault();
  fail("");
  const tok = $("op-token").value.trim();
  if (tok) sessionStorage.setItem("croupier:operator", tok); else sessionStorage.removeItem("croupier:operator");
  replay.gameId = $("game-id").value.trim();
  if (!replay.gameId) return;
  history.replaceState(null, "", `?game=${encodeURIComponent(replay.gameId)}`);
  $("status").textContent = "Reading the game's log…";
  try {
    const full = await api(replayUrl(null, opToken() ? "operator" : null), { token: token() });
    replay.lines = full.moves;
    replay.seats = opToken() ? Object.keys(full.view.seats || {}).length : (full.view.seats || []).length;
    // A step is one command's batch: the line starts with its first seq; it ends before the next.
    const starts = full.moves.map((line) => parseInt(line, 10)).filter((n) => !Number.isNaN(n));
    replay.steps = starts.map((s, i) => (i + 1 < starts.length ? starts[i + 1] - 1 : full.to));
    $("title").textContent = `Replay of ${replay.gameId}`;
    const viewer = $("viewer");
    clear(viewer);
    if (opToken()) viewer.append(h("option", { value: "operator" }, "every seat (operator)"));
    viewer.append(h("option", { value: "spectator" }, "a spectator"));
    for (let s = 0; s < replay.seats; s++) viewer.append(h("option", { value: String(s) }, `seat ${s}`));
    viewer.value = full.as === "operator" ? "spectator" : full.as;
    replay.viewer = viewer.value;
    const step = $("step");
    step.max = String(Math.max(0, replay.steps.length - 1));
    step.value = step.max;
    drawMoves();
    for (const id of ["step-panel", "view-panel", "moves-panel"]) $(id).hidden = false;
    $("fork-row").hidden = !opToken();
    clear($("forked"));
    replay.loaded += 1;
    await show(replay.steps.length - 1);
    $("status").textContent = `${replay.steps.length} steps.`;
    audit();
  } catch (ex) {
    $("status").textContent = "";
    fail(`Could not load the replay: ${ex.message}`);
  }
}

async function audit() {
  const panel = $("audit");
  if (!opToken()) { panel.hidden = true; return; }
  panel.hidden = false;
  const body = clear($("audit-body"));
  body.append(h("p", {}, "Auditing…"));
  try {
    const r = await api(`/v1/operator/games/${encodeURIComponent(replay.gameId)}/audit`, { token: opToken() });
    clear(body).append(
      h("p", { class: r.ok ? "verdict ok" : "verdict bad", id: "verdict" },
        !r.ok ? `✘ ${r.faults.length} fault(s); the first at seq ${r.first_fault.seq}: ${r.first_fault.what}`
          : r.ended === false
            ? `✔ Clean so far (the game is not over; the log ends at seq ${r.last_seq}): the hash chain, every shuffle and a re-execution of every command agree with the log. The seed is checked once the game ends and reveals it.`
            : "✔ Clean: the hash chain, the seed, every shuffle and a re-execution of every command agree with the log."),
      // A fork whose origin's own log could not be read was checked against the copy it carries only.
      r.ok && r.origin_checked === false
        ? h("p", { class: "verdict", id: "origin-unchecked" },
          "This fork's start was checked against the copy of its origin it carries only: the origin's own log could not be read now.")
        : "",
      facts([["Events", r.events], ["Commands", r.commands], ["Draws", r.draws]]),
      h("ul", { hidden: r.ok ? true : null }, r.faults.map((f) => h("li", {}, `seq ${f.seq} (${f.check}): ${f.what}`))));
  } catch (ex) {
    clear(body).append(h("p", { class: "error" }, `The audit failed: ${ex.message}`));
  }
}

// An operator's fork of the game at the step shown: the gateway makes the table and gives
// this browser a token for each of its seats (forks only), so the fork is played on in the
// table page like any other table.
async function forkHere() {
  const box = clear($("forked"));
  const at = replay.steps[replay.step];
  box.append(h("p", {}, `Forking at seq ${at}…`));
  try {
    const gid = encodeURIComponent(replay.gameId);
    const fork = await api(`/v1/operator/games/${gid}/fork`, { method: "POST", token: opToken(), body: { at, command_id: newId() } });
    const links = [];
    for (let s = 0; s < fork.seats; s++) {
      const seat = await api(`/v1/operator/games/${encodeURIComponent(fork.game_id)}/seats/${s}/token`,
        { method: "POST", token: opToken() });
      holdSeat(fork.game_id, s, seat, `seat ${s}`);
      links.push(h("li", {}, h("a", { href: `table.html?game=${encodeURIComponent(fork.game_id)}&seat=${s}` }, `play seat ${s}`)));
    }
    replay.fork = fork;
    clear(box).append(h("p", { id: "fork-done" }, `Forked at seq ${at} as ${fork.game_id}:`), h("ul", {}, links));
  } catch (ex) {
    clear(box).append(h("p", { class: "error" }, `Could not fork here: ${ex.message}`));
  }
}

function drawMoves() {
  const list = clear($("moves"));
  replay.lines.forEach((line, i) => {
    list.append(h("li", { id: `move-${i}` }, h("button", { type: "button", class: "link", onclick: () => go(i) }, line.trim())));
  });
}

function go(i) {
  const step = $("step");
  step.value = String(Math.max(0, Math.min(Number(step.max), i)));
  show(Number(step.value));
}

async function show(i) {
  const mine = ++ticket;
  replay.step = i;
  $("step-out").textContent = `${i + 1} of ${replay.steps.length} (seq ${replay.steps[i]})`;
  $("move-now").textContent = replay.lines[i] ? replay.lines[i].trim() : "";
  for (const li of $("moves").children) li.removeAttribute("aria-current");
  const cur = $(`move-${i}`);
  if (cur) { cur.setAttribute("aria-current", "step"); cur.scrollIntoView({ block: "nearest" }); }
  try {
    const r = await api(replayUrl(replay.steps[i], replay.viewer), { token: token() });
    if (mine !== ticket) return;
    fail("");
    const box = clear($("view"));
    const views = r.as === "operator" ? Object.entries(r.view.seats).map(([s, v]) => [`Seat ${s}`, v]) : [[null, r.view]];
    for (const [title, v] of views) {
      const ctx = new ActionContext(v.game_type, [], null, () => {});
      box.append(h("article", { class: "replay-view" }, title ? h("h3", {}, title) : null,
        facts([["Version", v.version], ["Status", v.status], ["To act", (v.to_act || []).join(", ")], ["Result", v.result]]),
        ...renderGame(v, ctx)));
    }
    replay.shown = { step: i, to: r.to, as: r.as, view: r.view };
  } catch (ex) {
    if (mine === ticket) fail(ex.message);
  }
}

function main() {
  $("op-token").value = opToken();
  $("game-id").value = params.get("game") || "";
  $("load").addEventListener("submit", load);
  let timer = null;
  $("step").addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(() => show(Number($("step").value)), 120); });
  $("prev").addEventListener("click", () => go(replay.step - 1));
  $("next").addEventListener("click", () => go(replay.step + 1));
  $("viewer").addEventListener("change", () => { replay.viewer = $("viewer").value; show(replay.step); });
  $("fork").addEventListener("click", forkHere);
  if (opToken()) {
    api("/v1/operator/games?status=over&limit=50", { token: opToken() }).then((r) => {
      for (const g of r.games || []) $("recent").append(h("option", { value: g.game_id }));
    }).catch(() => {});
  }
  if ($("game-id").value) load();
}

main();
