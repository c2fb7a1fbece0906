"""A worker sent SIGTERM alone (the load test itself not interrupted) ends its run early and
reports: a worker_failed error, its figures counted, and the tables it left are a failed
worker's (tables.failed), force-ended with the others."""

from __future__ import annotations

from croupier_gateway.loadtest import Config, Timeline, build_report


def final(stopped=None):
    return {"type": "final", "worker": 0, "stopped": stopped, "warm": None, "kinds": {}, "games": {}, "errors": {},
            "refusals": {}, "rate_limited": 0, "opened": 3, "finished": {"journey": 1}, "failed": 0,
            "unfinished": [["journey-a", "journey"], ["journey-b", "journey"]], "samples": []}


def test_a_worker_stopped_alone_is_a_failure_and_its_tables_failed_ones():
    cfg = Config(games=("journey",), tables=4, duration_s=10.0, workers=2)
    report = build_report(cfg, [final(), final("SIGTERM")], Timeline(), 10.0)
    assert report["errors_by_kind"] == {"worker_failed:stopped by SIGTERM": 1}
    assert report["tables"]["opened"] == report["tables"]["finished"] + report["tables"]["unfinished"] == 6
    assert report["tables"]["failed"] == 2


def test_workers_stopped_by_their_parent_on_an_interrupt_are_no_failure():
    cfg = Config(games=("journey",), tables=4, duration_s=10.0, workers=2)
    timeline = Timeline()
    timeline.interrupted, timeline.ran_s = "SIGTERM", 5.0
    report = build_report(cfg, [final("parent"), final("SIGTERM")], timeline, 5.0)
    assert report["errors"] == 0 and report["tables"]["failed"] == 0 and report["interrupted"] == "SIGTERM"
