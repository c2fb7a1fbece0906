"""`croupier play`, the terminal client, against the running gateway."""

from __future__ import annotations

import subprocess
import sys
import time

import httpx

from e2e_helpers import OPERATOR_TOKEN

CMD = [sys.executable, "-m", "croupier.cli.main", "play"]


def play(stack_services, *args, stdin=""):
    return subprocess.run([*CMD, "--gateway", stack_services.http_url, *args], input=stdin, capture_output=True,
                          text=True, timeout=120)


def test_a_bot_picks_moves_for_you(stack_services):
    game = stack_services.games[0]
    done = play(stack_services, "--game", game, "--auto", "random", "--bots", "random", "--moves", "5")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert done.stdout.count("  -> ") == 5 and "made 5 moves" in done.stdout


def test_pick_moves_by_number_then_quit(stack_services):
    game = stack_services.games[0]
    done = play(stack_services, "--game", game, "--bots", "random", stdin="v\nx\n1\n1\nq\n")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    out = done.stdout
    assert "your move [1-" in out and "pick a number from the list" in out and out.rstrip().endswith("bye")


def test_join_a_table_and_see_it_end(stack_services):
    """One player creates a table and waits; a second joins it by id; an operator ends it;
    both clients show the end and the revealed seed."""
    game = stack_services.games[0]
    first = subprocess.Popen([*CMD, "--gateway", stack_services.http_url, "--game", game, "--bots", "none",
                              "--auto", "random"],
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    second = None
    try:
        line = first.stdout.readline()
        assert line.startswith("created table "), line
        table = line.split()[2]
        second = subprocess.Popen([*CMD, "--gateway", stack_services.http_url, "--table", table, "--auto", "random"],
                                  stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  text=True)
        assert second.stdout.readline().startswith("you are seat 1 at ")
        time.sleep(0.5)
        r = httpx.post(f"{stack_services.http_url}/v1/operator/games/{table}/force-end",
                       headers={"authorization": f"Bearer {OPERATOR_TOKEN}"}, json={"reason": "e2e"}, timeout=30)
        assert r.status_code == 200 or r.json()["error"]["code"] == "game_over", r.text
        out1, _ = first.communicate(timeout=30)
        out2, _ = second.communicate(timeout=30)
    finally:
        for p in (first, second):
            if p is not None and p.poll() is None:
                p.kill()
    assert first.returncode == 0 and "game over (" in out1 and "seed " in out1, out1[-1500:]
    assert second.returncode == 0 and "game over (" in out2, out2[-1500:]
