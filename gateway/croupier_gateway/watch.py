"""A page to watch a table in a browser: GET /watch/{game_id} opens the spectator stream
(or a seat's, with #token=...) and shows each view as it comes."""

from __future__ import annotations

import html

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>Croupier: %(gid)s</title>
<style nonce="%(nonce)s">body{font-family:sans-serif;margin:1em}pre{background:#f4f4f4;padding:1em;white-space:pre-wrap}
#status{color:#555}</style></head>
<body><h1>Table %(gid)s</h1><div id="status">connecting...</div><h3>Legal actions</h3><pre id="actions">[]</pre>
<h3>View</h3><pre id="view"></pre>
<script nonce="%(nonce)s">
const gid = %(gid_js)s;
let last = 0;
function connect() {
  const token = new URLSearchParams(location.hash.slice(1)).get("token");
  const proto = location.protocol === "https:" ? "wss" : "ws";
  let url = `${proto}://${location.host}/v1/tables/${encodeURIComponent(gid)}/stream?from_version=${last}`;
  if (token) url += `&token=${encodeURIComponent(token)}`;
  const ws = new WebSocket(url);
  ws.onopen = () => { if (!token) ws.send("{}"); };
  ws.onmessage = (e) => {
    const m = JSON.parse(e.data);
    if (m.error) { document.getElementById("status").textContent = m.error.message; return; }
    last = m.version;
    const v = m.view;
    document.getElementById("status").textContent =
      `version ${m.version}, ${v.status}` + (v.to_act && v.to_act.length ? `, to act: ${v.to_act}` : "") +
      (v.result ? `, result: ${JSON.stringify(v.result)}` : "");
    document.getElementById("view").textContent = JSON.stringify(v.game, null, 1);
    document.getElementById("actions").textContent = JSON.stringify(m.actions);
  };
  // 1000: the game is over. 4000 + an HTTP status: a refusal (its message is shown); only
  // 4429 and 4503 (come back later) and a dropped connection are worth another try.
  ws.onclose = (e) => {
    if (e.code === 1000) document.getElementById("status").textContent += " (the game is over)";
    else if (e.code < 4000 || e.code === 4429 || e.code === 4503) setTimeout(connect, e.code < 4000 ? 1000 : 3000);
  };
}
connect();
</script></body></html>
"""


def page(game_id: str, nonce: str) -> str:
    """The page; its inline script and style carry ``nonce``, which the answer's
    Content-Security-Policy names (app.py)."""
    import json

    return PAGE % {"gid": html.escape(game_id), "gid_js": json.dumps(game_id), "nonce": html.escape(nonce)}
