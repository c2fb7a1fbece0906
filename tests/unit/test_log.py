from __future__ import annotations

import json

from croupier import log
from croupier.config import LogSettings


def test_services_log_json_lines(capsys) -> None:
    log.configure(LogSettings(level="info", format="json"))
    log.get_logger("rules", game_id="g-1").info("command_accepted", seq=3, seat=0)
    log.get_logger("rules").debug("not shown at info")
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 1
    event = json.loads(lines[0])
    assert event["event"] == "command_accepted"
    assert (event["game_id"], event["seq"], event["seat"], event["level"]) == ("g-1", 3, 0, "info")
    assert event["logger"] == "rules" and "timestamp" in event


def test_the_cli_logs_readable_lines_to_stderr(capsys, monkeypatch) -> None:
    monkeypatch.delenv("CROUPIER_LOG_FORMAT", raising=False)
    log.configure_cli()
    log.get_logger("cli").warning("stack_slow", seconds=31)
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "stack_slow" in captured.err and "seconds=31" in captured.err
    log.configure(LogSettings())  # back to the default for other tests
