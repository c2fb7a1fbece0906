"""The check of the finished games: each game's row has the fields docs/performance.md gives
("The report": game_id, game_type, events, source, audit_ok, projection_ok, problem) whatever
happened to it, and a log that could not be found says where it was looked for."""

from __future__ import annotations

import asyncio

from loadtest_fakes import FakeGateway

from croupier_gateway import loadtest
from croupier_gateway.loadtest import Config, check_games

ROW_FIELDS = {"game_id", "game_type", "events", "source", "audit_ok", "projection_ok", "problem"}


def check(monkeypatch, fetch_log) -> dict:
    monkeypatch.setattr(loadtest, "make_client", lambda *a, **k: FakeGateway())
    monkeypatch.setattr(loadtest, "fetch_log", fetch_log)
    cfg = Config(games=("journey",), tables=1, duration_s=1.0)
    return asyncio.run(check_games(cfg, [("journey-0123456789abcdef", "journey", ["t0"])]))


def test_a_game_whose_log_cannot_be_read_has_every_field(monkeypatch):
    """`source` was missing from the row of a game whose log could not be read (the gateway's
    export refused, Kafka away): a report reader keyed on the documented fields broke on it."""
    async def unreadable(cfg, game_id, game_type):
        raise ConnectionError("the export failed")

    result = check(monkeypatch, unreadable)
    (row,) = result["games"]
    assert set(row) == ROW_FIELDS
    assert row["source"] is None and not row["audit_ok"] and not row["projection_ok"]
    assert "ConnectionError: the export failed" in row["problem"]
    assert result["passed"] is False


def test_a_log_not_found_in_kafka_says_where_it_was_looked_for(monkeypatch):
    """Read from Kafka with another CROUPIER_TOPIC_PREFIX than the stack's, every game's log is
    empty; the check said only "audit: {... 'the log is empty'}". It now names the broker and
    the topic, and the settings to look at."""
    monkeypatch.setenv("CROUPIER_TOPIC_PREFIX", "elsewhere.")

    async def empty(cfg, game_id, game_type):
        return [], "kafka"

    (row,) = check(monkeypatch, empty)["games"]
    assert set(row) == ROW_FIELDS and row["source"] == "kafka" and row["events"] == 0
    assert "elsewhere.croupier.events.journey" in row["problem"]
    assert "CROUPIER_TOPIC_PREFIX" in row["problem"] and "--operator-token" in row["problem"]


def test_the_games_kept_for_the_check_are_the_last_finished(monkeypatch):
    """A worker kept the first --check finished games of each type for the check. The check
    reads their views with their seats' tokens, which last CROUPIER_TOKEN_TTL_S (12 h by
    default) while --duration goes up to a day: after a long run every sampled game's views
    were refused and the check failed, the stack being right. The last ones are kept now."""
    import time

    from loadtest_fakes import Out, run_guarded

    from croupier_gateway.loadtest import Worker

    fake = FakeGateway(moves=2)
    cfg = Config(games=("journey",), tables=1, duration_s=0.3, bot="random", workers=1, seats=1, check=2)
    monkeypatch.setattr(loadtest, "make_client", lambda *a, **k: fake)
    out = Out()
    worker = Worker(0, cfg, time.monotonic(), out)
    fake.worker = worker
    run_guarded(lambda: worker.run())
    (final,) = out.of("final")
    # In the order they ended; one that ended as the time ran out, before its bots saw it, is
    # among the tables cut short, not the finished ones.
    cut_short = {gid for gid, _ in final["unfinished"]}
    finished = [g for g, in_run in fake.ended_in_run.items() if in_run and g not in cut_short]
    assert sum(final["finished"].values()) == len(finished)
    assert len(finished) > 2, "the test needs more finished games than it keeps"
    assert [s[0] for s in final["samples"]] == finished[-2:]


def test_a_signal_while_the_tables_are_force_ended_is_named_in_the_report(monkeypatch):
    """Ctrl-C while the load test force-ended its tables, after a whole run: it exited 130 and
    its --json said nothing of a signal (`interrupted` null, as the figures are whole), so a
    script reading the report could not tell why the exit code said SIGINT. The report names it
    now (`signal_after_run`), and the figures stay those of the whole run."""
    interrupt = loadtest.Interrupt()

    async def force_end(cfg, unfinished):
        interrupt.name = "SIGINT"  # Ctrl-C midway through the force-ends
        return len(unfinished), 0

    monkeypatch.setattr(loadtest, "force_end", force_end)
    cfg = Config(games=("journey",), tables=2, duration_s=1.0, operator_token="t", check=0, progress=False)
    report = {"tables": {"force_ended": 0, "force_end_failed": 0}, "interrupted": None}
    asyncio.run(loadtest.after(cfg, report, [], [["journey-0123456789abcdef", "journey"]], interrupt))
    assert report["signal_after_run"] == "SIGINT" and report["interrupted"] is None
    assert report["tables"]["force_ended"] == 1
    # A run the signal cut short says so in `interrupted` alone.
    cut = {"tables": {"force_ended": 0, "force_end_failed": 0}, "interrupted": "SIGTERM"}
    asyncio.run(loadtest.after(cfg, cut, [], [["journey-0123456789abcdef", "journey"]], interrupt))
    assert "signal_after_run" not in cut
