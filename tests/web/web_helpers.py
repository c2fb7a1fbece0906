"""Driving the web client with Playwright (headless Debian Chromium, never a downloaded one).

A game is played the way people would: the first player creates the table with the lobby's
form and joins seat 0; every other player opens the lobby in a browser of their own (a
Playwright context: its own storage, its own window), follows the table's "join" link and
joins a seat with the table page's form. Then each seat's page loops: wait until the page
shows moves it has not acted on, read its clickable moves (the buttons it shows), let the
game's heuristic bot pick one of them from that page's own view, click the card or space the
move uses (when there is one; the list then shows its moves) and then the move. All seats of
all games run at once, so the round trips overlap.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import shutil
import time
from dataclasses import dataclass, field
from typing import Any

from playwright.async_api import TimeoutError as PlaywrightTimeout

from croupier.engine import registry
from croupier.engine.bots import bot_for

CHROMIUM = os.environ.get("CROUPIER_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-timer-throttling",
                 "--disable-renderer-backgrounding", "--disable-backgrounding-occluded-windows"]
DESKTOP = {"width": 1100, "height": 900}
CARD_EVERY = 4  # select the move's card or space first on the first such move, then every fourth
CLICK_MS = 5000
RECLICK_MS = 20000  # no new view this long after a click, and the page still offers the same moves  # a click whose element stays gone this long: the view changed, look again
PHONE = {"width": 390, "height": 844}  # a phone-sized window (CSS pixels)


def chromium_path() -> str:
    path = CHROMIUM if os.path.isabs(CHROMIUM) else shutil.which(CHROMIUM)
    if not path or not os.path.exists(path):
        raise RuntimeError(f"no Chromium at {CHROMIUM}: `make setup` installs Debian's chromium "
                           "(or set CROUPIER_CHROMIUM); the tests never download a browser")
    return path


# Ready: the game is over, or the page shows moves newer than the last one this seat made.
READY_JS = """(acted) => { const s = window.croupierTable;
  return !!s && (s.over || (!s.busy && s.version > acted && !!document.querySelector('#moves-body button[data-action]'))); }"""

LOOK_JS = """() => { const s = window.croupierTable; return {version: s.version, busy: s.busy, over: s.over,
  actions: s.actions.length, buttons: document.querySelectorAll('#moves-body button[data-action]').length,
  connection: s.connection, error: document.getElementById('error').textContent}; }"""

# The page's clickable moves, and for each the card or space on the board that selects it
# (its data-ref and data-types; null when the move names none on the board).
STATE_JS = """() => { const s = window.croupierTable;
  const refsOf = (a) => { const r = [];
    for (const [k, v] of Object.entries(a)) {
      if (k === 'type' || v === null || typeof v === 'boolean') continue;
      if (typeof v === 'string') r.push(v);
      r.push(`${k}:${v}`);
    }
    if (typeof a.x === 'number' && typeof a.y === 'number') r.push(`xy:${a.x},${a.y}`);
    return r; };
  const targets = [...document.querySelectorAll('#board button[data-ref]')];
  const buttons = [...document.querySelectorAll('#moves-body button[data-action]')].map((b) => {
    const a = JSON.parse(b.dataset.action);
    const refs = refsOf(a);
    const t = targets.find((el) => { const types = el.dataset.types ? el.dataset.types.split(' ') : null;
      return refs.includes(el.dataset.ref) && (!types || types.includes(a.type)); });
    return {raw: b.dataset.action, action: a,
            target: t ? {ref: t.dataset.ref, types: t.dataset.types === undefined ? null : t.dataset.types} : null}; });
  return {version: s.version, over: s.over, seat: s.seat, view: s.view, buttons,
          error: document.getElementById('error').hidden ? null : document.getElementById('error').textContent}; }"""


@dataclass
class SeatPage:
    game_type: str
    game_id: str
    seat: int
    page: Any
    bot: Any
    rng: random.Random
    acted: int = 0
    moves: int = 0
    card_clicks: int = 0
    snapshots: list = field(default_factory=list)  # (version, html, view) every few moves
    seconds: dict = field(default_factory=lambda: {"wait": 0.0, "read": 0.0, "click": 0.0})
    reclicks: int = 0
    shot: tuple | None = None  # (after this many moves, path): a screenshot in the middle of the game


def css(value: str) -> str:
    """A CSS attribute value, quoted."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def canon(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


async def create_in_lobby(page, base_url: str, game_type: str, seats: int, options: dict[str, Any],
                          name: str) -> str:
    """Create a table with the lobby's form and join seat 0; returns the table's id."""
    await page.goto(f"{base_url}/web/")
    await page.select_option("#game", game_type)
    await page.fill("#seats", str(seats))
    await page.fill("#name", name)
    for opt, value in options.items():
        sel = f"#opt-{opt}"
        kind = await page.eval_on_selector(sel, "el => el.tagName + ':' + (el.type || '')")
        if kind.startswith("SELECT"):
            await page.select_option(sel, str(value))
        elif kind.endswith("checkbox"):
            await page.set_checked(sel, bool(value))
        else:
            await page.fill(sel, str(value))
    await page.check("input[name=take][value=one]")
    await page.click("#create button[type=submit]")
    await page.wait_for_url("**/table.html?game=*")
    return await page.evaluate("() => new URLSearchParams(location.search).get('game')")


async def join_from_lobby(page, base_url: str, game_type: str, game_id: str, seat: int, name: str) -> None:
    """Find the open table in the lobby, follow its join link and take `seat` on the table page."""
    await page.goto(f"{base_url}/web/")
    await page.select_option("#f-game", game_type)
    # The list refreshes itself every few seconds: the new table shows up in it.
    row = page.locator("tr", has=page.locator("code", has_text=game_id))
    await row.get_by_role("link", name="join").click()
    await page.wait_for_url("**/table.html?game=*")
    await page.fill("#player", name)
    await page.get_by_role("button", name=f"Join seat {seat}").click()
    await page.wait_for_function(f"() => window.croupierTable && window.croupierTable.seat === {seat}")


async def seat_pages(browser, base_url: str, game_type: str, seats: int, options: dict[str, Any], seed: int,
                     *, phone_seats: tuple[int, ...] = (1,)) -> list[SeatPage]:
    """A table of `game_type` with every seat taken by its own browser context, through the lobby."""
    spec = registry.get(game_type)
    bot = bot_for(spec, "heuristic" if "heuristic" in spec.bots else "random")
    pages = []
    for seat in range(seats):
        ctx = await browser.new_context(viewport=PHONE if seat in phone_seats else DESKTOP)
        pages.append(await ctx.new_page())
    game_id = await create_in_lobby(pages[0], base_url, game_type, seats, options, "player 0")
    for seat in range(1, seats):
        await join_from_lobby(pages[seat], base_url, game_type, game_id, seat, f"player {seat}")
    return [SeatPage(game_type, game_id, seat, page, bot, random.Random(f"{seed}:{game_type}:{seat}"))
            for seat, page in enumerate(pages)]


async def play_seat(sp: SeatPage, deadline: float, snapshot_every: int = 0) -> None:
    """Click this seat's moves until the game is over."""
    while True:
        t0 = time.monotonic()
        left_ms = max(1.0, (deadline - t0) * 1000)
        try:
            await sp.page.wait_for_function(READY_JS, arg=sp.acted, polling=40, timeout=min(left_ms, RECLICK_MS))
        except PlaywrightTimeout as exc:
            st = await sp.page.evaluate(LOOK_JS)
            if time.monotonic() >= deadline:
                raise AssertionError(f"{sp.game_id} seat {sp.seat} stuck after {sp.moves} moves: {st}") from exc
            if st["version"] == sp.acted and st["actions"] and not st["busy"]:
                # The page still offers moves at the version we clicked on: the click did not
                # reach the button (it was redrawn under the pointer); click again.
                sp.reclicks += 1
                sp.acted = -1
            continue
        t1 = time.monotonic()
        st = await sp.page.evaluate(STATE_JS)
        t2 = time.monotonic()
        sp.seconds["wait"] += t1 - t0
        sp.seconds["read"] += t2 - t1
        if st["over"]:
            return
        if st["version"] <= sp.acted or not st["buttons"]:
            continue
        if st["error"] and "moved on" not in st["error"]:
            raise AssertionError(f"{sp.game_id} seat {sp.seat}: the page shows an error: {st['error']}")
        if snapshot_every and sp.moves % snapshot_every == 0:
            snap = await sp.page.evaluate("() => ({version: window.croupierTable.version, "
                                          "html: document.documentElement.outerHTML, view: window.croupierTable.view})")
            sp.snapshots.append((snap["version"], snap["html"], snap["view"]))
        if sp.shot and sp.moves == sp.shot[0]:
            await sp.page.screenshot(path=str(sp.shot[1]), full_page=True)
        actions = [b["action"] for b in st["buttons"]]
        choice = sp.bot(st["view"], actions, sp.rng)
        if choice is None:  # the bot waits (its vote stands): act again on a later version
            sp.acted = st["version"]
            continue
        chosen = next(b for b in st["buttons"] if canon(b["action"]) == canon(choice))
        try:
            target = chosen["target"]
            if target is not None and (sp.card_clicks == 0 or sp.moves % CARD_EVERY == 1):
                # Select the card or space first: the list then shows only the moves that use it.
                sel = f"#board button[data-ref={css(target['ref'])}]"
                sel += f"[data-types={css(target['types'])}]" if target["types"] is not None else ":not([data-types])"
                await sp.page.locator(sel).first.click(timeout=CLICK_MS)
                sp.card_clicks += 1
            await sp.page.locator(f"#moves-body button[data-action={css(chosen['raw'])}]").click(timeout=CLICK_MS)
        except PlaywrightTimeout:
            # The view changed under the click (another seat moved, the move is gone): look again.
            continue
        sp.acted = st["version"]
        sp.moves += 1
        sp.seconds["click"] += time.monotonic() - t2


async def play_all(pages: list[SeatPage], *, timeout_s: float, snapshot_every: int = 0) -> None:
    deadline = time.monotonic() + timeout_s
    results = await asyncio.gather(*(play_seat(sp, deadline, snapshot_every) for sp in pages), return_exceptions=True)
    failed = [(sp, r) for sp, r in zip(pages, results) if isinstance(r, BaseException)]
    if failed:
        looks = {f"{sp.game_id}/{sp.seat}": await sp.page.evaluate(LOOK_JS) for sp, _ in failed}
        raise AssertionError(f"{len(failed)} seat(s) did not finish: {[str(r) for _, r in failed]}; pages: {looks}")
