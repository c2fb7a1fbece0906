// Drawing a table's view: one renderer per game for the cards, board and seats, built on a
// generic part (cards, spaces, facts, the full view as JSON) that works for any game.
//
// A card or space on the page carries data-ref (a card id, or "slot:2", "color:red",
// "xy:1,0"...). When one of the seat's legal actions names that ref, the element is a button:
// clicking it selects it, and the action list shows only the moves that use it.

import { facts, h, section, words } from "./dom.js";

const SUITS = { H: "♥", D: "♦", C: "♣", S: "♠" };
const RED_SUITS = new Set(["H", "D"]);
const EXP_COLORS = new Set(["yellow", "blue", "white", "green", "red"]);

// -- card names -------------------------------------------------------------------------

export function cardLabel(game, id) {
  if (id === null || id === undefined) return "face down";
  const s = String(id);
  if (game === "journey") {
    const m = /^(10|[2-9AJQK])([HDCS])$/.exec(s);
    if (m) return `${m[1]}${SUITS[m[2]]}`;
    return words(s);
  }
  if (game === "expeditions") {
    const m = /^([a-z]+)-(\d+)-[a-z]$/.exec(s);
    if (m) return m[2] === "0" ? `${m[1]} wager` : `${m[1]} ${m[2]}`;
    const t = /^(artefact|arrow|points)-(\d+)(?:-[a-z])?$/.exec(s);
    if (t) return t[1] === "points" ? `${t[2]} points` : `${t[1]} ${t[2]}`;
    return s;
  }
  if (game === "delve") {
    return s.replace(/^(enc|boss):/, "").replace(/\.(s\d+\.)?\d+$/, "").replace(/-/g, " ");
  }
  if (game === "nightfall") {
    return s.replace(/^s\d-/, "").replace(/-\d+$/, "").replace(/-/g, " ");
  }
  if (game === "virtues") {
    const m = /^act-([a-z]{2})-([a-z]{2})-(\d+)$/.exec(s);
    if (m) return `${m[1]}+${m[2]} ${m[3]}`;
    return s.replace(/^(loc|sp)-/, "").replace(/-/g, " ");
  }
  return s;
}

function cardClass(game, id) {
  const s = String(id ?? "");
  if (game === "journey") {
    const m = /^(10|[2-9AJQK])([HDCS])$/.exec(s);
    if (m) return RED_SUITS.has(m[2]) ? "suit-red" : "suit-black";
  }
  if (game === "expeditions") {
    const c = s.split("-")[0];
    if (EXP_COLORS.has(c)) return `c-${c}`;
  }
  return "";
}

// -- clickable things -------------------------------------------------------------------

// An element for `ref`: a button if some legal action uses it (restricted to `types`), else
// plain. `content` is its text (or nodes); `label` its accessible name.
export function target(ctx, ref, content, { cls = "", label = null, types = null, tag = "span" } = {}) {
  const n = ref === null || ref === undefined ? 0 : ctx.count(ref, types);
  const attrs = { class: `${cls}`, dataset: { ref: ref ?? "" } };
  if (types) attrs.dataset.types = types.join(" ");
  if (n > 0) {
    const sel = ctx.isSelected(ref, types);
    const btn = h("button", {
      ...attrs, type: "button", class: `${cls} playable${sel ? " selected" : ""}`,
      "aria-pressed": sel ? "true" : "false",
      "aria-label": `${label || textOf(content)}: ${n} move${n > 1 ? "s" : ""}`,
      onclick: () => ctx.select(ref, types),
    }, content);
    return btn;
  }
  if (label) attrs["aria-label"] = label;
  if (label && tag === "span") attrs.role = "img";
  return h(tag, attrs, content);
}

function textOf(content) {
  if (content instanceof Node) return content.textContent;
  if (Array.isArray(content)) return content.map(textOf).join(" ");
  return String(content);
}

export function card(ctx, id, { extra = null, types = null } = {}) {
  const game = ctx.game;
  if (id === null || id === undefined) {
    return h("span", { class: "card back", role: "img", "aria-label": "a face-down card" }, "🂠");
  }
  const label = cardLabel(game, id);
  const content = extra ? [label, h("small", {}, extra)] : label;
  return target(ctx, String(id), content, { cls: `card ${cardClass(game, id)}`, label: extra ? `${label} ${extra}` : label, types });
}

function backs(n, what = "cards") {
  return h("span", { class: "backs", "aria-label": `${n} ${what} face down`, role: "img" },
    "🂠".repeat(Math.min(n, 10)), n > 10 ? ` ×${n}` : "");
}

function cards(ctx, list, opts) {
  if (!list || !list.length) return h("span", { class: "none" }, "none");
  return h("ul", { class: "cards" }, list.map((c) => h("li", {}, card(ctx, c, opts))));
}

function seatName(table, seat) {
  const p = table.seats && table.seats[seat];
  const name = p && p.player ? ` (${p.player})` : "";
  return `Seat ${seat}${name}${table.you === seat ? " — you" : ""}`;
}

function seatBlock(table, seat, ...children) {
  const acting = (table.to_act || []).includes(seat);
  return h("article", { class: `seat${table.you === seat ? " mine" : ""}${acting ? " acting" : ""}`, "aria-label": seatName(table, seat) },
    h("h4", {}, seatName(table, seat), acting ? h("span", { class: "badge" }, " to act") : null), ...children);
}

// -- per game ---------------------------------------------------------------------------

function expeditions(g, ctx, table) {
  const out = [];
  out.push(facts([["Expedition", `${g.expedition} of ${g.expeditions}`], ["Phase", g.phase], ["Current", `seat ${g.current}`],
    ["Supply", g.supply_count], ["Bridge crossings", `${g.crossings} of ${g.board?.crossings_to_end}`],
    ["Pending", g.pending ? `${g.pending.kind}${g.pending.excluded ? ` (not ${g.pending.excluded})` : ""}` : null]]));
  const board = h("div", { class: "paths" });
  for (const color of g.board?.paths || []) {
    const steps = h("ol", { class: "steps", "aria-label": `${color} path steps` });
    (g.tiles?.[color] || []).forEach((tile, i) => {
      const here = (g.players || []).filter((p) => p.paths?.[color]?.step === i + 1)
        .map((p) => `P${p.seat}${p.paths[color].researcher ? "R" : ""}`);
      steps.append(h("li", { class: "step", "aria-label": `step ${i + 1}, worth ${g.board.values[i]}${tile ? `, tile ${cardLabel("expeditions", tile)}` : ""}${here.length ? `, figures ${here.join(" ")}` : ""}` },
        h("span", { class: "val" }, String(g.board.values[i])),
        tile ? h("span", { class: "tile" }, cardLabel("expeditions", tile).replace("artefact", "art")) : null,
        here.length ? h("span", { class: "fig" }, here.join(" ")) : null));
    });
    const pile = g.discards?.[color];
    out.push();
    board.append(h("div", { class: `path c-${color}` },
      target(ctx, `color:${color}`, color, { cls: "pathname", types: ["MoveFigure"], label: `move the ${color} figure` }),
      steps,
      target(ctx, `color:${color}`, [pile?.top ? cardLabel("expeditions", pile.top) : "empty", h("small", {}, ` (${pile?.count ?? 0})`)],
        { cls: "pile", types: ["DrawFromDiscard"], label: `${color} discard pile, ${pile?.count ?? 0} cards` })));
  }
  out.push(section("Board", board));
  const seats = h("div", { class: "seats" });
  for (const p of g.players || []) {
    const paths = Object.entries(p.paths || {}).map(([c, path]) => h("li", {},
      h("span", { class: `c-${c}` }, `${c}${path.researcher ? " (researcher)" : ""}, step ${path.step}: `), cards(ctx, path.cards)));
    seats.append(seatBlock(table, p.seat,
      h("p", {}, "Hand: ", p.hand ? cards(ctx, p.hand) : backs(p.hand_count)),
      paths.length ? h("ul", { class: "plain" }, paths) : h("p", {}, "No paths begun"),
      facts([["Adventurers left", p.adventurers_left], ["Researchers left", p.researchers_left], ["Chips", p.chips],
        ["Artefacts", (p.artefact_tiles || []).map((t) => cardLabel("expeditions", t)).join(", ") || null], ["Artefact chips", p.artefact_chips]])));
  }
  out.push(section("Players", seats));
  return out;
}

function virtuesCard(ctx, c, opts) {
  if (!c) return card(ctx, null);
  if (typeof c === "string") return card(ctx, c, opts);
  const extra = c.name ? null : (c.symbols || []).join(" + ");
  const label = c.name || cardLabel("virtues", c.id);
  return target(ctx, c.id, c.name ? [label, h("small", {}, c.special || "")] : [label, h("small", {}, extra)],
    { cls: `card ${c.special ? "special" : ""}`, label: `${label}${extra ? ` (${extra})` : ""}`, types: opts?.types });
}

function virtues(g, ctx, table) {
  const out = [];
  out.push(facts([["Phase", g.step || g.phase], ["Turn", `${g.turn} of at most ${g.turn_limit}`], ["To win", `${g.target} completions`],
    ["Current", `seat ${g.current}`], ["Action deck", g.action_deck_count], ["Location deck", g.location_deck_count],
    ["Bonus plays", g.bonus_plays_left || null]]));
  out.push(section("Display", h("ul", { class: "cards" }, (g.display || []).map((c) => h("li", {}, virtuesCard(ctx, c))))));
  out.push(section("Discard pile", (g.discard || []).length ? h("ul", { class: "cards" }, h("li", {}, card(ctx, g.discard[g.discard.length - 1])),
    h("li", { class: "none" }, `${g.discard.length} in the pile`)) : h("span", { class: "none" }, "empty")));
  if (g.looking_at) out.push(section("Looking at", Array.isArray(g.looking_at)
    ? h("ul", { class: "cards" }, g.looking_at.map((c) => h("li", {}, virtuesCard(ctx, c)))) : facts(Object.entries(g.looking_at))));
  if (g.hand) out.push(section("Your hand", h("ul", { class: "cards" }, g.hand.map((c) => h("li", {}, virtuesCard(ctx, c))))));
  const seats = h("div", { class: "seats" });
  for (const p of g.players || []) {
    const locs = h("ul", { class: "locations" }, (p.array || []).map((loc) => h("li", {},
      virtuesCard(ctx, { id: loc.id, symbols: loc.symbols }),
      h("ul", { class: "covers", "aria-label": "symbols" }, (loc.symbols || []).map((sym, i) => h("li", {},
        h("span", { class: "sym" }, sym), ": ", loc.covers?.[i] ? card(ctx, loc.covers[i]) : h("span", { class: "none" }, "open")))))));
    seats.append(seatBlock(table, p.seat, h("p", {}, `Hand: ${p.hand_count} cards · completed ${p.completed_count}`),
      (p.completed || []).length ? h("p", {}, "Completed: ", (p.completed || []).map((c) => cardLabel("virtues", c.id || c)).join(", ")) : null,
      locs));
  }
  out.push(section("Players", seats));
  return out;
}

function journey(g, ctx, table) {
  const out = [];
  out.push(facts([["Phase", g.step || g.phase], ["Journey deck", g.journey_count], ["Supply", g.supply_count],
    ["Satchel limit", g.limit], ["Arrived", g.arrived ? "yes" : null], ["Companion", g.companion], ["Witnessed", g.witnessed],
    ["Outcome", g.outcome]]));
  out.push(section("Route", (g.route || []).length
    ? h("ol", { class: "cards" }, g.route.map((r) => h("li", {}, card(ctx, r.card, { extra: r.place }))))
    : h("span", { class: "none" }, "not yet begun")));
  if (g.encounter) {
    const e = g.encounter;
    out.push(section("Encounter", h("p", {}, card(ctx, e.card, { extra: e.kind })),
      facts(Object.entries(e).filter(([k]) => k !== "card" && k !== "kind").map(([k, v]) => [words(k), typeof v === "boolean" ? (v ? "yes" : "no") : v]))));
  }
  if (g.pending || g.played || (g.payers || []).length) {
    out.push(section("Now", facts([["Pending", g.pending], ["Played", g.played], ["Payers", (g.payers || []).join(", ") || null]])));
  }
  out.push(section("Piles", h("p", {}, "Discard: ", cards(ctx, g.discard)), h("p", {}, "Defeated: ", cards(ctx, g.defeated))));
  const seats = h("div", { class: "seats" });
  (g.travellers || []).forEach((t, seat) => {
    const caches = (g.caches || []).filter((c) => c.seat === seat);
    seats.append(seatBlock(table, seat,
      facts([["Standing", t.standing ? "yes" : "no"], ["Walking", t.walking ? "yes" : null], ["Satchel", t.room_used === null || t.room_used === undefined ? `${t.satchel_count} cards` : `${t.satchel_count} cards, ${t.room_used} room used`],
        ["Wreckage", t.wreckage], ["Points", t.points]]),
      seat === table.you && g.satchel ? h("p", {}, "Satchel: ", cards(ctx, g.satchel)) : null,
      caches.length ? h("ul", { class: "plain" }, caches.map((c) => h("li", {}, `Cache at ${c.place}: `, c.hidden ? card(ctx, c.hidden) : backs(1, "card")))) : null));
  });
  out.push(section("Travellers", seats));
  return out;
}

function delve(g, ctx, table) {
  const out = [];
  out.push(facts([["Stage", g.stage], ["Round", g.round], ["Floor", g.floor ? `${g.floor.name} (${g.floor.index + 1} of ${g.floor.floors})` : null],
    ["Boss", g.boss?.card ? `${cardLabel("delve", g.boss.card)}: ${g.boss.hp} of ${g.boss.max_hp} hit points${g.boss.engaged ? ", engaged" : ""}` : null],
    ["Cleared", g.cleared], ["Diamond found", g.diamond_found ? "yes" : null], ["Outcome", g.outcome], ["Reason", g.reason]]));
  if (g.floor) {
    const f = g.floor;
    const slots = h("ol", { class: "floor" }, (f.cards || []).map((c, i) => {
      const notes = [f.cleared.includes(i) ? "cleared" : null, f.final.includes(i) ? "final" : null,
        f.route === i ? "chosen" : null].filter(Boolean).join(", ");
      const votes = g.vote ? g.vote.votes.map((v, s) => (v === i ? `seat ${s}` : null)).filter(Boolean) : [];
      const content = [h("span", { class: "slotno" }, `slot ${i}`), c ? cardLabel("delve", c) : "face down",
        notes ? h("small", {}, notes) : null, votes.length ? h("small", {}, `votes: ${votes.join(", ")}`) : null];
      return h("li", {}, target(ctx, `slot:${i}`, content, { cls: `space${c ? "" : " down"}${f.cleared.includes(i) ? " cleared" : ""}`,
        label: `slot ${i}: ${c ? cardLabel("delve", c) : "face down"}${notes ? ` (${notes})` : ""}` }));
    }));
    if (f.stairs_open) {
      // Rules version 3: a final-row card is cleared; a route vote may go down (Vote slot -2).
      const votes = g.vote ? g.vote.votes.map((v, s) => (v === -2 ? `seat ${s}` : null)).filter(Boolean) : [];
      slots.append(h("li", {}, target(ctx, "slot:-2", [h("span", { class: "slotno" }, "stairs"),
        g.floor.index + 1 < g.floor.floors ? "down to the next floor" : "down to the boss",
        votes.length ? h("small", {}, `votes: ${votes.join(", ")}`) : null],
      { cls: "space", label: "the stairs down" })));
    }
    out.push(section("Dungeon", slots));
  }
  if (g.facing) {
    const f = g.facing;
    out.push(section(`Seat ${f.seat} faces`, h("p", {}, card(ctx, f.card)), h("p", {}, "Committed: ", cards(ctx, f.committed)),
      f.preview ? h("ul", { class: "plain" }, Object.entries(f.preview).map(([skill, [mode, die, t]]) => h("li", {}, `${skill}: d${die} ${mode}, succeeds on 1–${t}`))) : null));
  }
  if (g.support) out.push(section("Support", facts([["Attacker", `seat ${g.support.attacker}`], ["Skill", g.support.skill], ["Waiting", g.support.waiting.join(", ")]]),
    h("p", {}, "Cards: ", cards(ctx, g.support.cards.map(([, c]) => c)))));
  if (g.choice) out.push(section("Choice", facts([["Seat", g.choice.seat], ["Mode", g.choice.mode], ["Count", g.choice.count], ["Chosen", g.choice.chosen_count]]),
    g.choice.chosen ? h("p", {}, "Chosen: ", cards(ctx, g.choice.chosen)) : null));
  if (g.visit) out.push(section("Market visit", facts([["Seat", g.visit.seat], ["Kind", g.visit.kind], ["Bought", g.visit.bought ? "yes" : "no"], ["Rested", g.visit.rested ? "yes" : "no"]])));
  out.push(section("Market", cards(ctx, g.market), h("p", { class: "none" }, `${g.market_stock} in stock, ${g.loot_deck} in the loot deck`)));
  const seats = h("div", { class: "seats" });
  for (const p of g.players || []) {
    seats.append(seatBlock(table, p.seat,
      facts([["Health", `${p.health}${p.conscious ? "" : " (unconscious)"}`], ["Coins", p.coins], ["Draw pile", p.draw_count], ["Destroyed", p.destroyed]]),
      h("p", {}, "Hand: ", p.hand ? cards(ctx, p.hand) : backs(p.hand_count)),
      p.draw ? h("p", {}, "Draw pile (any order): ", cards(ctx, p.draw)) : null,
      h("p", {}, "Discard: ", cards(ctx, p.discard))));
  }
  out.push(section("Party", seats));
  return out;
}

function nightfall(g, ctx, table) {
  const out = [];
  out.push(facts([["Phase", g.phase], ["Round", `${g.round} of ${g.max_rounds}`], ["Turn", g.turn], ["Active", `seat ${g.active}`],
    ["Decks", (g.decks || []).join(" vs ")], ["Withdraw cost", g.withdraw_cost], ["Pending", g.pending],
    ["Winners", (g.winners || []).length ? g.winners.join(", ") : null], ["End", g.end_reason || null]]));
  // The map: locations on a grid, with the empty cells a PlaceLocation may use.
  const cells = new Map();
  for (const loc of g.locations || []) cells.set(`${loc.x},${loc.y}`, loc);
  const spots = ctx.refs().filter((r) => r.startsWith("xy:")).map((r) => r.slice(3));
  const xs = [], ys = [];
  for (const key of [...cells.keys(), ...spots]) { const [x, y] = key.split(",").map(Number); xs.push(x); ys.push(y); }
  const grid = h("div", { class: "grid", role: "list", "aria-label": "the map" });
  if (xs.length) {
    const [x0, x1, y0, y1] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
    grid.style.gridTemplateColumns = `repeat(${x1 - x0 + 1}, minmax(7em, 1fr))`;
    for (let y = y0; y <= y1; y++) {
      for (let x = x0; x <= x1; x++) {
        const loc = cells.get(`${x},${y}`);
        if (loc) {
          const here = (g.characters || []).filter((c) => c.location === loc.card);
          const traps = (g.traps || []).filter((t) => t.location === loc.card);
          grid.append(h("div", { class: "cell", role: "listitem" }, card(ctx, loc.card, { extra: `(${x},${y})` }),
            h("ul", { class: "cards" }, here.map((c) => h("li", {}, card(ctx, c.card, { extra: `${c.hp} hp${(c.flags || []).length ? ", " + c.flags.join(", ") : ""}` })))),
            traps.length ? h("p", {}, "Traps: ", traps.map((t) => (t.card ? cardLabel("nightfall", t.card) : "a trap")).join(", ")) : null));
        } else {
          grid.append(h("div", { class: "cell empty", role: "listitem" },
            target(ctx, `xy:${x},${y}`, `(${x},${y})`, { cls: "space", label: `empty space ${x},${y}` })));
        }
      }
    }
  }
  out.push(section("Map", grid));
  const seats = h("div", { class: "seats" });
  (g.players || []).forEach((p, seat) => {
    seats.append(seatBlock(table, seat,
      facts([["Deck", `${(g.decks || [])[seat] || ""} (${p.deck_count} left)`], ["Graveyard", `${p.graveyard_hp} hp`], ["Redraws", p.redraws]]),
      h("p", {}, "Hand: ", p.hand ? cards(ctx, p.hand) : backs(p.hand_count)),
      p.opening ? h("p", {}, "Opening: ", card(ctx, p.opening)) : null,
      h("p", {}, "Discard: ", cards(ctx, p.discard)), h("p", {}, "Graveyard: ", cards(ctx, p.graveyard)),
      (p.withdrawn || []).length ? h("p", {}, "Withdrawn: ", cards(ctx, p.withdrawn)) : null));
  });
  out.push(section("Players", seats));
  return out;
}

function generic(g) {
  return [facts(Object.entries(g || {}).filter(([, v]) => v === null || typeof v !== "object"))];
}

const RENDERERS = { expeditions, virtues, journey, delve, nightfall };

// The whole view of one table (the gateway's view JSON for this viewer) as page content.
export function renderGame(table, ctx) {
  const g = table.game;
  if (!g) return [h("p", {}, "The game has not begun: it starts when every seat is taken.")];
  const draw = RENDERERS[table.game_type] || generic;
  let parts;
  try {
    parts = draw(g, ctx, table);
  } catch (err) {
    console.error(err);
    parts = generic(g);
  }
  // The full view as JSON, drawn only while it is open (it is large, and changes each move).
  const pre = h("pre", {});
  const details = h("details", { class: "raw", ontoggle: () => { pre.textContent = details.open ? JSON.stringify(g, null, 1) : ""; } },
    h("summary", {}, "The full view (JSON)"), pre);
  if (ctx.rawOpen) { details.open = true; pre.textContent = JSON.stringify(g, null, 1); }
  parts.push(details);
  return parts;
}
