"""The web client in headless Chromium, against the real stack: a game of each of the five
types played to the end by clicking (each seat in a browser of its own, one of them
phone-sized), watched by spectators, its pages checked against the engine's views and for
other seats' hidden cards, a reload that keeps the seat, keyboard play, and the operator's
replay page stepped through with the audit verdict, then forked at a step and played on."""

from __future__ import annotations

import asyncio
import json
import re
import time

import httpx
import pytest
from playwright.async_api import async_playwright
from playwright.sync_api import sync_playwright

from croupier.engine import registry
from croupier.engine.table import TableHost
from e2e_helpers import OPERATOR_TOKEN, states_by_version
from web_helpers import CHROMIUM_ARGS, DESKTOP, PHONE, canon, chromium_path, play_all, seat_pages

GAMES = ("expeditions", "virtues", "journey", "delve", "nightfall")
# Two seats each; options that keep a game short where the game has them.
OPTIONS = {"nightfall": {"max_rounds": 2}}
SPECTATED = ("virtues", "nightfall")
PLAY_TIMEOUT_S = 600.0  # only stops a stuck run; the games take far less
TOKEN_RE = re.compile(r"[A-Za-z0-9:._-]+")


def tokens(html: str) -> set[str]:
    return set(TOKEN_RE.findall(html))


async def _watch(page, game_id: str, out: list) -> None:
    """A spectator's page: snapshot it every second until the game is over."""
    await page.wait_for_function("() => window.croupierTable && window.croupierTable.version > 0")
    while True:
        snap = await page.evaluate("() => ({version: window.croupierTable.version, over: window.croupierTable.over, "
                                   "html: document.documentElement.outerHTML, view: window.croupierTable.view})")
        out.append((snap["version"], snap["html"], snap["view"]))
        if snap["over"]:
            return
        await asyncio.sleep(1.0)


async def _play(base_url: str, artifacts) -> dict:
    started = time.monotonic()
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        seated = await asyncio.gather(*(seat_pages(browser, base_url, game, 2, OPTIONS.get(game, {}), seed=i)
                                        for i, game in enumerate(GAMES)))
        tables = dict(zip(GAMES, seated))
        for game, pages in tables.items():
            pages[0].shot = (8, artifacts / f"{game}-seat0-playing.png")
        spectators = {}
        for game in SPECTATED:
            ctx = await browser.new_context(viewport=PHONE)
            page = await ctx.new_page()
            await page.goto(f"{base_url}/web/table.html?game={tables[game][0].game_id}")
            spectators[game] = (page, [])
        seated_s = time.monotonic() - started
        all_seats = [sp for pages in tables.values() for sp in pages]
        await asyncio.gather(play_all(all_seats, timeout_s=PLAY_TIMEOUT_S, snapshot_every=7),
                             *(_watch(page, tables[g][0].game_id, snaps) for g, (page, snaps) in spectators.items()))
        played_s = time.monotonic() - started - seated_s
        out = {}
        for game, pages in tables.items():
            finals = []
            for sp in pages:
                await sp.page.wait_for_function("() => window.croupierTable.over")
                shot = artifacts / f"{game}-seat{sp.seat}{'-phone' if sp.seat == 1 else ''}.png"
                await sp.page.screenshot(path=str(shot), full_page=True)
                finals.append(await sp.page.evaluate(
                    "() => ({version: window.croupierTable.version, status: document.getElementById('status').textContent,"
                    " statusRole: document.getElementById('status').getAttribute('role'),"
                    " resultShown: !document.getElementById('result').hidden,"
                    " buttons: document.querySelectorAll('#moves-body button[data-action]').length,"
                    " overflow: document.documentElement.scrollWidth - window.innerWidth})"))
            out[game] = {"game_id": pages[0].game_id, "seats": pages, "finals": finals}
        for game, (page, snaps) in spectators.items():
            await page.screenshot(path=str(artifacts / f"{game}-spectator-phone.png"), full_page=True)
            out[game]["spectator"] = snaps
            out[game]["spectator_buttons"] = await page.locator("button[data-action]").count()
        await browser.close()
    moves = {g: [sp.moves for sp in r["seats"]] for g, r in out.items()}
    reclicks = sum(sp.reclicks for r in out.values() for sp in r["seats"])
    print(f"web: seated 5 tables through the lobby in {seated_s:.1f} s, played them in {played_s:.1f} s "
          f"(moves per seat {moves}, {reclicks} lost clicks clicked again); screenshots in {artifacts}")
    return out


@pytest.fixture(scope="module")
def played_web(stack_services, artifacts):
    return asyncio.run(_play(stack_services.http_url, artifacts))


@pytest.mark.parametrize("game", GAMES)
def test_a_game_is_played_to_the_end_by_clicking(played_web, stack_services, artifacts, game):
    run = played_web[game]
    table = httpx.get(f"{stack_services.http_url}/v1/tables/{run['game_id']}").json()
    assert table["status"] == "over", table
    assert [p["player"] for p in table["players"]] == ["player 0", "player 1"]  # joined through the lobby
    seats = run["seats"]
    assert all(sp.moves > 0 for sp in seats), [sp.moves for sp in seats]
    assert sum(sp.card_clicks for sp in seats) > 0  # some moves were made by picking a card or space first
    for final in run["finals"]:
        assert final["version"] == table["version"]
        assert final["status"].startswith("Game over")
        assert final["statusRole"] == "status"  # announced to screen readers (aria-live)
        assert final["resultShown"]
        assert final["buttons"] == 0
    assert run["finals"][1]["overflow"] <= 1  # the phone-sized page does not scroll sideways
    assert (artifacts / f"{game}-seat0.png").stat().st_size > 10_000


@pytest.mark.parametrize("game", SPECTATED)
def test_a_spectator_watches_the_game_live(played_web, stack_services, game):
    run = played_web[game]
    snaps = run["spectator"]
    table = httpx.get(f"{stack_services.http_url}/v1/tables/{run['game_id']}").json()
    versions = [v for v, _, _ in snaps]
    assert versions == sorted(versions) and versions[-1] == table["version"]
    assert len(set(versions)) >= 2  # it saw the game move, not only its end
    final = httpx.get(f"{stack_services.http_url}/v1/tables/{run['game_id']}/view").json()
    assert canon(snaps[-1][2]) == canon(final["view"])
    assert run["spectator_buttons"] == 0  # a spectator is offered no moves


@pytest.mark.parametrize("game", GAMES)
def test_a_page_never_holds_a_card_hidden_from_its_viewer(played_web, stack_services, game):
    """Every snapshot of a seat's (or spectator's) page: the view it holds is the engine's view
    for that viewer at that version, and no card id hidden from that viewer is anywhere in the
    page's HTML. The check can fail: the same pages do hold cards hidden from the other seat."""
    run = played_web[game]
    spec = registry.get(game)
    host = TableHost(spec)
    states = states_by_version(stack_services.kafka, stack_services.prefix, game, run["game_id"])
    viewers = [(sp.seat, sp.snapshots) for sp in run["seats"]] + [(None, run.get("spectator", []))]
    checked = 0
    checked_seats: set[int] = set()
    others_hidden_seen = 0
    for seat, snaps in viewers:
        for version, html, view in snaps:
            state = states[version]
            assert canon(view) == canon(host.view(state, seat)), (game, seat, version)
            page_tokens = tokens(html)
            if state.game is None:
                continue
            leaked = spec.hidden(state.game, seat) & page_tokens
            assert not leaked, f"{game} v{version}: the page of {seat} holds hidden cards {sorted(leaked)[:5]}"
            if seat is not None:
                other = 1 - seat
                others_hidden_seen += len(spec.hidden(state.game, other) & page_tokens)
                checked_seats.add(seat)
            checked += 1
    # Each seat's page is caught before its first move and every 7th after, so a short game
    # gives few snapshots (3 in one journey game); every seat's page must be among them.
    assert checked_seats == {sp.seat for sp in run["seats"]} and checked >= len(checked_seats)
    assert others_hidden_seen > 0  # a seat's page shows its own secrets, which the other seat's may not


CSP_PROBE = """document.addEventListener('securitypolicyviolation',
  (e) => (window.__cspViolations = window.__cspViolations || []).push(`${e.violatedDirective} ${e.blockedURI}`));"""


def test_the_pages_run_under_their_content_security_policy(played_web, stack_services):
    """Every page of the web client, and /watch, is served with a Content-Security-Policy
    that forbids framing and any script or style not its own, and runs under it: nothing it
    does is blocked, and /watch's inline script (allowed by its nonce) shows the game."""
    base = stack_services.http_url
    gid = played_web["nightfall"]["game_id"]
    pages = {
        f"{base}/web/": "() => document.querySelectorAll('#game option').length >= 5",
        f"{base}/web/table.html?game={gid}": "() => window.croupierTable && window.croupierTable.over",
        f"{base}/web/replay.html?game={gid}": "() => document.readyState === 'complete'",
        f"{base}/watch/{gid}": "() => document.getElementById('status').textContent.startsWith('version')",
    }
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        ctx = browser.new_context(viewport=DESKTOP)
        ctx.add_init_script(CSP_PROBE)
        for url, ready in pages.items():
            page = ctx.new_page()
            response = page.goto(url)
            policy = response.headers.get("content-security-policy", "")
            assert "frame-ancestors 'none'" in policy and "script-src" in policy, (url, policy)
            assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
            assert response.headers.get("x-content-type-options") == "nosniff"
            page.wait_for_function(ready)
            page.wait_for_load_state("networkidle")
            assert page.evaluate("() => window.__cspViolations || []") == [], url
            page.close()
        browser.close()
    api = httpx.get(f"{base}/v1/tables/{gid}")
    assert api.headers["x-content-type-options"] == "nosniff"
    assert "content-security-policy" not in api.headers  # the API is JSON, not a page


def test_the_watch_page_shows_a_refusal_and_does_not_knock_again(stack_services):
    """/watch of a table that does not exist: the stream is refused (4404), the page says
    why, and it does not reconnect every second as it does after a dropped connection."""
    base = stack_services.http_url
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        page = browser.new_context(viewport=DESKTOP).new_page()
        sockets = []
        page.on("websocket", lambda ws: sockets.append(ws.url))
        page.goto(f"{base}/watch/no-such-table-here")
        page.wait_for_function("() => document.getElementById('status').textContent.includes('no-such-table-here')")
        page.wait_for_timeout(3500)
        browser.close()
    assert len(sockets) == 1, sockets


def test_reload_keeps_the_seat_and_the_keyboard_plays(stack_services):
    base = stack_services.http_url
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        ctx = browser.new_context(viewport=DESKTOP)
        page = ctx.new_page()
        # Hot seat from the lobby: this browser takes both seats of a new table.
        page.goto(f"{base}/web/")
        page.select_option("#game", "nightfall")
        page.fill("#name", "hot")
        page.check("input[name=take][value=all]")
        page.click("#create button[type=submit]")
        page.wait_for_url("**/table.html?game=*&seat=0")
        gid = page.evaluate("() => new URLSearchParams(location.search).get('game')")
        page.wait_for_function("() => window.croupierTable.view && window.croupierTable.view.status === 'running'")
        acting = page.evaluate("() => window.croupierTable.view.to_act")[0]
        page.goto(f"{base}/web/table.html?game={gid}&seat={acting}")
        page.wait_for_function("() => document.querySelectorAll('#moves-body button[data-action]').length > 0")
        before = page.evaluate("() => window.croupierTable.version")
        # Keyboard only: Tab from the top of the page to the first move, then Enter.
        page.locator("body").focus()
        for _ in range(60):
            page.keyboard.press("Tab")
            if page.evaluate("() => !!document.activeElement.dataset.action"):
                break
        assert page.evaluate("() => !!document.activeElement.dataset.action"), "no move reachable with Tab"
        page.keyboard.press("Enter")
        page.wait_for_function(f"() => window.croupierTable.version > {before}")
        after = page.evaluate("() => window.croupierTable.version")
        # A reload finds the seat again (the token is in localStorage) and the game where it was.
        page.reload()
        page.wait_for_function(f"() => window.croupierTable.version >= {after}")
        assert page.evaluate("() => window.croupierTable.seat") == acting
        assert page.evaluate("() => window.croupierTable.token !== null")
        # The page knows both seats; the other one is a link away.
        other = 1 - acting
        page.get_by_role("link", name=f"seat {other}").click()
        page.wait_for_function(f"() => window.croupierTable.seat === {other} && window.croupierTable.version >= {after}")
        # A seat token near its expiry (here: the record says so) is renewed when the page
        # opens, and the page plays on with the new one.
        page.evaluate(f"""() => {{ const k = 'croupier:seats:{gid}'; const all = JSON.parse(localStorage.getItem(k));
            all['{other}'].expires_at = Math.floor(Date.now() / 1000) + 60; localStorage.setItem(k, JSON.stringify(all)); }}""")
        before_token = page.evaluate(f"() => JSON.parse(localStorage.getItem('croupier:seats:{gid}'))['{other}'].token")
        # A token's expiry is in whole seconds: renewed within the second its seat was taken
        # (a fast run gets here that soon), the new token is the old one, byte for byte.
        time.sleep(1.1)
        page.reload()
        page.wait_for_function(f"""() => JSON.parse(localStorage.getItem('croupier:seats:{gid}'))['{other}'].expires_at
            > Date.now() / 1000 + 3600""")
        renewed = page.evaluate(f"() => JSON.parse(localStorage.getItem('croupier:seats:{gid}'))['{other}'].token")
        assert renewed != before_token
        page.wait_for_function(f"() => window.croupierTable.token === {json.dumps(renewed)}")
        assert httpx.get(f"{base}/v1/tables/{gid}/view", headers={"authorization": f"Bearer {renewed}"}).json()["seat"] == other
        # A token that no longer works (here: forged) is dropped, and the page watches instead.
        page.evaluate(f"""() => localStorage.setItem('croupier:seats:{gid}', JSON.stringify({{"0": {{"token": "forged.token"}}}}))""")
        page.goto(f"{base}/web/table.html?game={gid}&seat=0")
        page.wait_for_function("() => window.croupierTable.seat === null && window.croupierTable.version > 0")
        assert "no longer works" in page.text_content("#error")
        browser.close()


def test_the_replay_page_steps_through_a_game_with_its_audit(played_web, stack_services, artifacts):
    base = stack_services.http_url
    gid = played_web["nightfall"]["game_id"]
    op = {"authorization": f"Bearer {OPERATOR_TOKEN}"}
    full = httpx.get(f"{base}/v1/operator/games/{gid}/replay", params={"as": "operator"}, headers=op, timeout=30).json()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport=DESKTOP)
        page.goto(f"{base}/web/replay.html")
        page.fill("#op-token", OPERATOR_TOKEN)
        page.fill("#game-id", gid)
        page.click("#load button[type=submit]")
        page.wait_for_selector("#verdict")
        assert "Clean" in page.text_content("#verdict")
        steps = page.evaluate("() => window.croupierReplay.steps")
        assert len(steps) == len(full["moves"]) and steps[-1] == full["to"]
        assert page.locator("#moves li").count() == len(full["moves"])
        page.wait_for_function("() => window.croupierReplay.shown && window.croupierReplay.shown.to === "
                               f"{full['to']}")

        def shown(step: int, viewer: str) -> dict:
            page.wait_for_function(f"() => window.croupierReplay.shown && window.croupierReplay.shown.step === {step}"
                                   f" && window.croupierReplay.shown.as === '{viewer}'")
            return page.evaluate("() => window.croupierReplay.shown")

        # The slider, by keyboard: Home goes to the first step, ArrowRight one on.
        page.focus("#step")
        page.keyboard.press("Home")
        assert shown(0, "spectator")["to"] == steps[0]
        page.keyboard.press("ArrowRight")
        shown(1, "spectator")
        # The buttons, and the view as seat 0 in the middle of the game.
        middle = len(steps) // 2
        page.locator("#moves li").nth(middle).get_by_role("button").click()
        page.select_option("#viewer", "0")
        got = shown(middle, "0")
        assert got["to"] == steps[middle]
        expected = httpx.get(f"{base}/v1/operator/games/{gid}/replay", params={"as": "0", "to": steps[middle]},
                             headers=op, timeout=30).json()
        assert canon(got["view"]) == canon(expected["view"])
        states = states_by_version(stack_services.kafka, stack_services.prefix, "nightfall", gid)
        state = states[expected["view"]["version"]]
        hidden = registry.get("nightfall").hidden(state.game, 0)
        assert not hidden & tokens(page.inner_html("#view"))
        assert page.get_attribute(f"#move-{middle}", "aria-current") == "step"
        page.click("#next")
        assert shown(middle + 1, "0")["to"] == steps[middle + 1]
        page.click("#prev")
        shown(middle, "0")
        # Every seat at once, as an operator may.
        page.select_option("#viewer", "operator")
        shown(middle, "operator")
        assert page.locator("#view article.replay-view").count() == 2
        assert page.locator("#moves li").nth(1).inner_text() == full["moves"][1].strip()  # the moves in words
        page.screenshot(path=str(artifacts / "replay-nightfall.png"), full_page=True)
        # Fork the game at this step and play on: the page gets a token for each of the
        # fork's seats, and the table page plays them.
        page.click("#fork")
        page.wait_for_selector("#fork-done")
        fork = page.evaluate("() => window.croupierReplay.fork")
        table = httpx.get(f"{base}/v1/tables/{fork['game_id']}", timeout=30).json()
        assert table["origin"]["game_id"] == gid and table["origin"]["seq"] == steps[middle]
        assert table["status"] == "running"
        assert page.locator("#forked a").count() == fork["seats"] == 2
        page.locator("#forked a").first.click()
        page.wait_for_function("() => window.croupierTable && window.croupierTable.view && window.croupierTable.seat === 0")
        acting = page.evaluate("() => window.croupierTable.view.to_act")[0]
        page.goto(f"{base}/web/table.html?game={fork['game_id']}&seat={acting}")
        page.wait_for_function("() => document.querySelectorAll('#moves-body button[data-action]').length > 0")
        before = page.evaluate("() => window.croupierTable.version")
        page.locator("#moves-body button[data-action]").first.click()
        page.wait_for_function(f"() => window.croupierTable.version > {before}")
        browser.close()


def test_a_seat_whose_token_came_too_late_opens_its_stream_again(stack_services):
    """The page sends its token in the stream's first message. One that comes after the
    gateway's wait (CROUPIER_GATEWAY_WS_AUTH_WAIT_S, 0.2 s here; a busy browser) is refused,
    4400 token_too_late, where it used to be left on a spectator's stream without a word: the
    page opens the stream again, and plays its seat."""
    base = stack_services.http_url
    created = httpx.post(f"{base}/v1/tables", json={"game_type": "nightfall", "seats": 2}, timeout=30).json()
    gid = created["game_id"]
    joined = [httpx.post(f"{base}/v1/tables/{gid}/seats/{s}", json={"player": f"p{s}"}, timeout=30).json()
              for s in range(2)]
    held = {"0": {"token": joined[0]["token"], "expires_at": joined[0]["expires_at"], "player": "p0"}}
    # A busy browser: on its first stream, the page's token goes out a second late and the
    # spectator's views the gateway sends meanwhile go unread (the page would take one for a
    # late token and open the stream again on its own); later streams are as usual.
    late_first_send = """(() => {
        const proto = WebSocket.prototype, send = proto.send;
        const onmessage = Object.getOwnPropertyDescriptor(proto, "onmessage");
        let first = null;
        Object.defineProperty(proto, "onmessage", { configurable: true,
          get() { return onmessage.get.call(this); },
          set(fn) {
            if (first === null) first = this;
            onmessage.set.call(this, this !== first ? fn
              : (e) => { if (String(e.data).startsWith('{"error"')) fn(e); });
          } });
        proto.send = function (data) {
          if (this === first && !this.delayed) { this.delayed = true; setTimeout(() => send.call(this, data), 1000); return; }
          return send.call(this, data);
        };
      })();"""
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        ctx = browser.new_context(viewport=DESKTOP)
        page = ctx.new_page()
        page.goto(f"{base}/web/")
        page.evaluate(f"() => localStorage.setItem('croupier:seats:{gid}', {json.dumps(json.dumps(held))})")
        page.add_init_script(late_first_send)
        frames: list[str] = []
        sockets: list[str] = []

        def on_socket(ws):
            sockets.append(ws.url)
            ws.on("framereceived", lambda payload: frames.append(payload if isinstance(payload, str) else ""))

        page.on("websocket", on_socket)
        page.goto(f"{base}/web/table.html?game={gid}&seat=0")
        page.wait_for_function("() => window.croupierTable.view && window.croupierTable.view.you === 0", timeout=20_000)
        assert page.evaluate("() => window.croupierTable.seat === 0 && window.croupierTable.token !== null")
        assert page.text_content("#error").strip() == ""
        browser.close()
    refusals = [json.loads(f)["error"]["code"] for f in frames if f.startswith('{"error"')]
    assert refusals == ["token_too_late"] and len(sockets) >= 2, (refusals, sockets)
