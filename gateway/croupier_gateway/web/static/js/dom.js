// Small DOM helpers. Text always goes in as text (never as HTML), so nothing a view holds
// can inject markup.

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") el.className = v;
    else if (k === "text") el.textContent = v;
    else if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(el.dataset, v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

export function words(name) {
  // "BeginPath" -> "Begin path", "iron-sword" -> "iron sword"
  return String(name)
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .replace(/[_-]+/g, " ")
    .replace(/^./, (c) => c.toUpperCase())
    .replace(/ ([A-Z])(?=[a-z])/g, (_, c) => " " + c.toLowerCase());
}

export function section(title, ...children) {
  const id = "s-" + Math.random().toString(36).slice(2, 9);
  return h("section", { class: "panel", "aria-labelledby": id }, h("h3", { id }, title), ...children);
}

export function facts(pairs) {
  const dl = h("dl", { class: "facts" });
  for (const [k, v] of pairs) {
    if (v === null || v === undefined || v === "") continue;
    dl.append(h("dt", {}, k), h("dd", {}, typeof v === "object" && !(v instanceof Node) ? JSON.stringify(v) : v));
  }
  return dl;
}
