"""`croupier projector rebuild`'s own errors name the command and its operation, as
`croupier serve projector: …` does: they said `croupier projector: …`."""

from __future__ import annotations

import socket

from croupier.cli.main import EXIT_UNAVAILABLE, main


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_rebuild_with_redis_away_says_croupier_projector_rebuild(monkeypatch, capsys):
    monkeypatch.setenv("CROUPIER_REDIS_URL", f"redis://127.0.0.1:{_closed_port()}/0")
    assert main(["projector", "rebuild"]) == EXIT_UNAVAILABLE
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("croupier projector rebuild: cannot reach Redis"), err


def test_a_rebuild_with_a_bad_setting_says_croupier_projector_rebuild(monkeypatch, capsys):
    monkeypatch.setenv("CROUPIER_PROJECTOR_MAX_RECORDS", "0")
    assert main(["projector", "rebuild"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("croupier projector rebuild: ") and "CROUPIER_PROJECTOR_MAX_RECORDS" in err, err
