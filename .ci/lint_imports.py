"""Run import-linter on the contracts in pyproject.toml, leaving out croupier modules not written yet.

import-linter refuses a contract that names a module that does not exist, and the contracts
name packages (croupier.games, croupier.rules, croupier.projector) before they are built. This
drops those names (saying so) and checks the rest; once the packages exist it changes nothing.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def exists(module: str) -> bool:
    if not module.startswith("croupier."):
        return True  # external: import-linter checks what is imported, nothing to find
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def main() -> int:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    lines = ["[importlinter]", "root_packages =", *(f"    {p}" for p in config["root_packages"])]
    lines.append(f"include_external_packages = {config.get('include_external_packages', False)}")
    missing: set[str] = set()
    for n, contract in enumerate(config.get("contracts", [])):
        section = ["", f"[importlinter:contract:{n}]"]
        for key, value in contract.items():
            if isinstance(value, list):
                kept = [v for v in value if exists(v)]
                missing.update(set(value) - set(kept))
                section += [f"{key} =", *(f"    {v}" for v in kept)]
                if not kept and key == "source_modules":
                    section = []  # nothing to check yet
                    break
            else:
                section.append(f"{key} = {value}")
        lines += section
    if missing:
        print(f"lint-imports: not written yet, left out of the contracts: {', '.join(sorted(missing))}")
    with tempfile.NamedTemporaryFile("w", suffix=".ini", delete=False) as handle:
        handle.write("\n".join(lines) + "\n")
    try:
        bin_dir = Path(sys.executable).parent
        return subprocess.call([str(bin_dir / "lint-imports"), "--config", handle.name], cwd=ROOT)
    finally:
        Path(handle.name).unlink()


if __name__ == "__main__":
    sys.exit(main())
