"""The rules engines import nothing from grpc, kafka, redis or the network."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_import_linter_contract_holds():
    lint = Path(sys.executable).with_name("lint-imports")
    proc = subprocess.run([str(lint), str(ROOT / "pyproject.toml")], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "KEPT" in proc.stdout


def test_engines_read_no_clock_and_no_global_random():
    offenders = []
    for path in (ROOT / "services" / "croupier").glob("*/**/*.py"):
        rel = path.relative_to(ROOT / "services" / "croupier")
        if rel.parts[0] not in ("engine", "games"):
            continue
        text = path.read_text(encoding="utf-8")
        for needle in ("import time", "from time", "datetime.now", "import secrets", "os.urandom", "random.random(", "random.shuffle(", "random.randint("):
            if needle in text:
                offenders.append(f"{rel}: {needle}")
    assert offenders == []
