"""Which CROUPIER_* settings the code reads, found by reading the sources (no imports).

- A setting is a ``CROUPIER_NAME`` literal anywhere in services/ or gateway/, or a call of the
  ``Env`` reader of services/croupier/config.py, which takes names without the prefix
  (``env.port("KAFKA_PORT", ...)`` reads CROUPIER_KAFKA_PORT).
- The services are the ``cmd_<service>`` functions of services/croupier/cli/serve.py (what
  ``croupier serve <service>`` runs). What one service reads is what the modules it imports
  read: the imports of its ``cmd_`` function (and of the functions of serve.py it calls), then
  every module those import, transitively, lazy imports inside functions included, each with
  its parent packages.

Module granularity over-approximates (croupier.config also holds the local stack's settings);
NOT_DEPLOYED (test_deploy_settings.py) names what a deployment leaves out on purpose.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE_ROOTS = {"croupier": ROOT / "services" / "croupier", "croupier_gateway": ROOT / "gateway" / "croupier_gateway"}
SERVE_MODULE = ROOT / "services" / "croupier" / "cli" / "serve.py"

NAME = re.compile(r"\bCROUPIER_[A-Z0-9_]*[A-Z0-9]\b")
# Env(...) of services/croupier/config.py: env.<reader>("NAME", ...), the prefix added by Env.
ENV_CALL = re.compile(r"\benv\.(?:raw|str|int|float|port|bool|choice|path)\(\s*[\"']([A-Z][A-Z0-9_]*)[\"']")
GENERATED = re.compile(r"_pb2(_grpc)?\.pyi?$")


def source_files() -> list[Path]:
    found = []
    for root in PACKAGE_ROOTS.values():
        if root.is_dir():
            found += [p for p in sorted(root.rglob("*.py")) if not GENERATED.search(p.name) and "__pycache__" not in p.parts]
    return found


@functools.cache
def settings_in(path: Path) -> frozenset[str]:
    text = path.read_text(encoding="utf-8")
    names = set(NAME.findall(text))
    names |= {"CROUPIER_" + name for name in ENV_CALL.findall(text)}
    return frozenset(names)


def all_settings() -> dict[str, list[Path]]:
    """Every setting the code reads, with the files that name it."""
    where: dict[str, list[Path]] = {}
    for path in source_files():
        for name in settings_in(path):
            where.setdefault(name, []).append(path)
    return where


@functools.cache
def module_file(module: str) -> Path | None:
    top, _, rest = module.partition(".")
    root = PACKAGE_ROOTS.get(top)
    if root is None:
        return None
    base = root.joinpath(*rest.split(".")) if rest else root
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def module_name(path: Path) -> str:
    for top, root in PACKAGE_ROOTS.items():
        if path.is_relative_to(root):
            parts = [top, *path.relative_to(root).with_suffix("").parts]
            return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
    raise ValueError(path)


def _resolve(node: ast.ImportFrom, current: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    package = current.split(".") if is_package else current.split(".")[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imported_modules(nodes: list[ast.AST], current: str, is_package: bool) -> set[str]:
    found: set[str] = set()
    for tree in nodes:
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(node, current, is_package)
                found.add(base)
                found |= {f"{base}.{alias.name}" for alias in node.names}
    return {m for m in found if module_file(m) is not None}


# Imports the AST cannot see: the registry imports each game's package by name.
DYNAMIC_IMPORTS = {"croupier.engine.registry": "croupier.games"}


def _dynamic(module: str) -> set[str]:
    package = DYNAMIC_IMPORTS.get(module)
    if package is None or module_file(package) is None:
        return set()
    root = module_file(package).parent
    return {module_name(p) for p in root.rglob("*.py") if "__pycache__" not in p.parts}


def _with_parents(module: str) -> set[str]:
    parts = module.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts) + 1)}


def closure(modules: set[str]) -> set[Path]:
    todo = set().union(*(_with_parents(m) for m in modules)) if modules else set()
    seen: set[str] = set()
    while todo:
        module = todo.pop()
        if module in seen or module_file(module) is None:
            continue
        seen.add(module)
        for imported in _imports_of(module):
            todo |= _with_parents(imported) - seen
    return {module_file(m) for m in seen}


FROM_IMPORT = re.compile(r"^[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#]*)", re.M)
PLAIN_IMPORT = re.compile(r"^[ \t]*import[ \t]+([^\n#]+)", re.M)


def _names(clause: str) -> list[str]:
    clause = clause.strip().strip("()").replace("\\", " ")
    return [part.split(" as ")[0].strip() for part in clause.split(",") if part.strip()]


@functools.cache
def _imports_of(module: str) -> frozenset[str]:
    """The croupier modules a module imports, anywhere in it (lazy imports too). A line scan,
    quicker than the AST for the whole code base; a match inside a string only adds a module."""
    path = module_file(module)
    text = path.read_text(encoding="utf-8")
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found: set[str] = set()
    for dots, name, clause in FROM_IMPORT.findall(text):
        base = name if not dots else ".".join(package[: len(package) - (len(dots) - 1)] + ([name] if name else []))
        found.add(base)
        found |= {f"{base}.{n}" for n in _names(clause)}
    for clause in PLAIN_IMPORT.findall(text):
        found |= set(_names(clause))
    return frozenset({m for m in found if module_file(m) is not None} | _dynamic(module))


@functools.cache
def service_entry_modules() -> dict[str, frozenset[str]]:
    """service -> the croupier modules its `croupier serve <service>` command imports."""
    tree = ast.parse(SERVE_MODULE.read_text(encoding="utf-8"))
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    top_level = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    current = module_name(SERVE_MODULE)
    services = {}
    for name, function in functions.items():
        if not name.startswith("cmd_"):
            continue
        bodies, todo, seen = [], [function], set()
        while todo:  # the function and every function of serve.py it calls, transitively
            fn = todo.pop()
            if fn.name in seen:
                continue
            seen.add(fn.name)
            bodies.append(fn)
            for call in ast.walk(fn):
                if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in functions:
                    todo.append(functions[call.func.id])
        services[name.removeprefix("cmd_")] = frozenset(imported_modules(top_level + bodies, current, False))
    return services


def services() -> list[str]:
    return sorted(service_entry_modules())


@functools.cache
def settings_read_by(service: str) -> frozenset[str]:
    files = closure(set(service_entry_modules()[service]))
    return frozenset().union(*(settings_in(path) for path in files))


def gateway_pending() -> bool:
    """True while this tree has no `croupier serve gateway` (the gateway's branch lands on its
    own): the deployment already has the gateway, and the checks that need its code wait."""
    return "gateway" not in service_entry_modules()
