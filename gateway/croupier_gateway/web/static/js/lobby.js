// The lobby: the games, the tables (open, running, over), create, join and watch.

import { api, holdSeat, newId, seatsHeld } from "./api.js";
import { clear, h } from "./dom.js";

const $ = (id) => document.getElementById(id);
let games = [];
let listing = 0;

function tableUrl(gameId, seat = null) {
  return `table.html?game=${encodeURIComponent(gameId)}${seat === null ? "" : `&seat=${seat}`}`;
}

function optionField(opt) {
  const id = `opt-${opt.name}`;
  const label = h("label", { for: id }, opt.name);
  let input;
  if (typeof opt.default === "boolean") {
    input = h("input", { id, name: opt.name, type: "checkbox", checked: opt.default ? true : null, "aria-describedby": `${id}-doc` });
    return h("div", { class: "field" }, input, " ", label, h("small", { id: `${id}-doc` }, ` ${opt.doc}`));
  }
  if (opt.choices) {
    input = h("select", { id, name: opt.name, "aria-describedby": `${id}-doc` },
      opt.choices.map((c) => h("option", { value: String(c), selected: c === opt.default ? true : null }, String(c))));
  } else if (typeof opt.default === "number") {
    input = h("input", { id, name: opt.name, type: "number", value: String(opt.default), min: opt.minimum ?? null, max: opt.maximum ?? null, "aria-describedby": `${id}-doc` });
  } else {
    input = h("input", { id, name: opt.name, value: String(opt.default ?? ""), "aria-describedby": `${id}-doc` });
  }
  return h("div", { class: "field" }, label, " ", input, h("small", { id: `${id}-doc` }, ` ${opt.doc}`));
}

function showGame() {
  const g = games.find((x) => x.id === $("game").value);
  if (!g) return;
  $("game-about").textContent = `${g.name}: ${g.min_seats}–${g.max_seats} seats. ${g.summary || ""}`;
  const seats = $("seats");
  seats.min = g.min_seats; seats.max = g.max_seats;
  seats.value = Math.min(g.max_seats, Math.max(g.min_seats, Number(seats.value) || 2));
  const box = clear($("options"));
  box.append(h("legend", {}, "Options"));
  if (!g.options.length) box.append(h("p", { class: "none" }, "none"));
  for (const opt of g.options) box.append(optionField(opt));
}

function readOptions(g) {
  const out = {};
  for (const opt of g.options) {
    const el = $(`opt-${opt.name}`);
    if (!el) continue;
    let v;
    if (el.type === "checkbox") v = el.checked;
    else if (typeof opt.default === "number") v = Number(el.value);
    else v = el.value;
    if (v !== opt.default) out[opt.name] = v;
  }
  return out;
}

async function create(e) {
  e.preventDefault();
  const err = $("create-error");
  err.hidden = true;
  const g = games.find((x) => x.id === $("game").value);
  const seats = Number($("seats").value);
  const name = $("name").value.trim() || "player";
  localStorage.setItem("croupier:name", name);
  const take = new FormData($("create")).get("take");
  try {
    const created = await api("/v1/tables", { method: "POST", retry: true,
      body: { game_type: g.id, seats, options: readOptions(g), command_id: newId() } });
    const gid = created.game_id;
    const mine = take === "all" ? [...Array(seats).keys()] : take === "one" ? [0] : [];
    for (const seat of mine) {
      const joined = await api(`/v1/tables/${encodeURIComponent(gid)}/seats/${seat}`, {
        method: "POST", retry: true, body: { player: mine.length > 1 ? `${name} ${seat}` : name, entropy: newId(), command_id: newId() } });
      holdSeat(gid, seat, joined, name);
    }
    location.href = tableUrl(gid, mine.length ? 0 : null);
  } catch (ex) {
    err.textContent = `Could not create the table: ${ex.message}`;
    err.hidden = false;
  }
}

async function refresh(e) {
  if (e) e.preventDefault();
  const status = $("f-status").value;
  const game = $("f-game").value;
  const q = new URLSearchParams({ status, limit: "50" });
  if (game) q.set("game_type", game);
  const box = $("table-list");
  const mine = ++listing;
  try {
    const { tables } = await api(`/v1/tables?${q}`);
    if (mine !== listing) return; // a newer listing is on its way
    clear(box);
    if (!tables.length) { box.append(h("p", { class: "none" }, `No ${status} tables.`)); return; }
    const rows = tables.map((t) => {
      const held = Object.keys(seatsHeld(t.game_id));
      const players = (t.players || []).map((p, i) => `${i}: ${p ? p.player || "taken" : "free"}`).join(", ");
      return h("tr", {},
        h("th", { scope: "row" }, h("code", {}, t.game_id)),
        h("td", {}, t.game_type),
        h("td", {}, t.status, t.status === "over" && t.end_reason ? ` (${t.end_reason})` : ""),
        h("td", {}, `${t.seats - t.free_seats} of ${t.seats}`, h("br"), h("small", {}, players)),
        h("td", { class: "links" },
          held.length ? h("a", { href: tableUrl(t.game_id, held[0]), class: "pill" }, `play seat ${held.join(", ")}`) : null,
          t.status === "open" && t.free_seats > 0 && !held.length ? h("a", { href: tableUrl(t.game_id), class: "pill" }, "join") : null,
          h("a", { href: tableUrl(t.game_id, "spectator"), class: "pill", "aria-label": `watch ${t.game_id}` }, "watch"),
          t.status === "over" ? h("a", { href: `replay.html?game=${encodeURIComponent(t.game_id)}`, class: "pill" }, "replay") : null));
    });
    box.append(h("table", {}, h("caption", {}, `${tables.length} ${status} table(s)`),
      h("thead", {}, h("tr", {}, ["Table", "Game", "Status", "Seats", ""].map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, rows)));
  } catch (ex) {
    clear(box).append(h("p", { class: "error" }, ex.message));
  }
}

async function main() {
  $("name").value = localStorage.getItem("croupier:name") || "";
  try {
    ({ games } = await api("/v1/games"));
  } catch (ex) {
    $("status").textContent = `The gateway did not answer: ${ex.message}`;
    return;
  }
  for (const g of games) {
    $("game").append(h("option", { value: g.id }, g.name));
    $("f-game").append(h("option", { value: g.id }, g.name));
    $("games").append(h("article", { class: "game" }, h("h3", {}, g.name),
      h("p", {}, g.summary || ""), h("p", { class: "hint" }, `${g.min_seats}–${g.max_seats} seats · bots: ${g.bots.join(", ")}`)));
  }
  $("game").addEventListener("change", showGame);
  $("create").addEventListener("submit", create);
  $("filter").addEventListener("submit", refresh);
  $("f-status").addEventListener("change", refresh);
  $("f-game").addEventListener("change", refresh);
  showGame();
  await refresh();
  $("status").textContent = `${games.length} games.`;
  // Refreshed every few seconds, but never under a keyboard user's focus.
  setInterval(() => { if (!document.hidden && !$("table-list").contains(document.activeElement)) refresh(); }, 5000);
}

main();
