// The seat's legal actions (the gateway's JSON, in its stable order) as things to click:
// which cards and spaces each action uses, a label in words, and the list of buttons.

import { h, words } from "./dom.js";
import { cardLabel } from "./games.js";

// The refs an action uses: every string value (a card id), "key:value" for every value,
// and "xy:x,y" for a position.
export function refsOf(action) {
  const refs = [];
  for (const [k, v] of Object.entries(action)) {
    if (k === "type" || v === null || v === undefined || typeof v === "boolean") continue;
    if (typeof v === "string") refs.push(v);
    refs.push(`${k}:${v}`);
  }
  if (typeof action.x === "number" && typeof action.y === "number") refs.push(`xy:${action.x},${action.y}`);
  return refs;
}

export function actionLabel(game, action) {
  // delve's route vote for the stairs (rules version 3) names no slot.
  if (game === "delve" && action.type === "Vote" && action.slot === -2) return "Vote: take the stairs down";
  const parts = [];
  for (const [k, v] of Object.entries(action)) {
    if (k === "type" || v === null || v === undefined) continue;
    if (v === true) parts.push(words(k).toLowerCase());
    else if (v === false) continue;
    else if (typeof v === "string") parts.push(k === "card" ? cardLabel(game, v) : `${words(k).toLowerCase()} ${cardLabel(game, v)}`);
    else parts.push(`${words(k).toLowerCase()} ${v}`);
  }
  return parts.length ? `${words(action.type)}: ${parts.join(", ")}` : words(action.type);
}

// What a renderer asks about actions while it draws, and the current selection.
export class ActionContext {
  constructor(game, actions, selected, onSelect) {
    this.game = game;
    this.actions = actions || [];
    this.selected = selected; // {ref, types} or null
    this.onSelect = onSelect;
    this.byRef = new Map();
    this.actions.forEach((a, i) => {
      for (const r of refsOf(a)) {
        if (!this.byRef.has(r)) this.byRef.set(r, []);
        this.byRef.get(r).push(i);
      }
    });
  }

  indices(ref, types) {
    const found = this.byRef.get(ref) || [];
    return types ? found.filter((i) => types.includes(this.actions[i].type)) : found;
  }

  count(ref, types) { return this.indices(ref, types).length; }

  refs() { return [...this.byRef.keys()]; }

  isSelected(ref, types) {
    return !!this.selected && this.selected.ref === ref && (this.selected.types || []).join() === (types || []).join();
  }

  select(ref, types) { this.onSelect(this.isSelected(ref, types) ? null : { ref, types }); }

  visible() {
    if (!this.selected) return this.actions.map((_, i) => i);
    const found = this.indices(this.selected.ref, this.selected.types);
    return found.length ? found : this.actions.map((_, i) => i);
  }
}

// The list of action buttons: every legal action, or those of the selected card or space.
export function actionList(ctx, { onAct, busy }) {
  const shown = ctx.visible();
  const filtered = ctx.selected && shown.length !== ctx.actions.length;
  const list = h("ul", { class: "actions" });
  for (const i of shown) {
    const a = ctx.actions[i];
    list.append(h("li", {}, h("button", {
      type: "button", class: "act", disabled: busy ? true : null, "aria-disabled": busy ? "true" : null,
      dataset: { actionIndex: String(i), action: JSON.stringify(a) }, onclick: () => onAct(a),
    }, actionLabel(ctx.game, a))));
  }
  return [
    filtered ? h("p", { class: "hint" }, `Moves with ${cardLabel(ctx.game, ctx.selected.ref.replace(/^[a-z]+:/, ""))}: `,
      h("button", { type: "button", class: "link", onclick: () => ctx.onSelect(null) }, "show all moves")) : null,
    list,
  ].filter(Boolean);
}
