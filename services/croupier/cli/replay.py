"""`croupier export | audit | replay | fork`: settle disputes from the event log."""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import sys
from pathlib import Path

from croupier.cli import argtypes
from croupier.config import ConfigError
from croupier.engine import registry
from croupier.engine.audit import MAX_SEQ
from croupier.engine.codec import loads
from croupier.engine.contract import Rejection
from croupier.engine.envelope import Envelope
from croupier.engine.table import check_fork_point
from croupier.numbers import parse_int


def _seq(text: str) -> int:
    """A seq for --to and --at: an integer 1..2**62."""
    value = parse_int(text)
    if value is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not a seq (an integer from 1)")
    if not 1 <= value <= MAX_SEQ:
        raise argparse.ArgumentTypeError(f"a seq is 1..{MAX_SEQ}, not {value}")
    return value


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("export", help="a game's events (envelopes) as JSON lines, from Kafka")
    p.add_argument("game_id", nargs="?", help="the game to export")
    p.add_argument("--out", help="file to write (default: standard output)")
    p.add_argument("--all", action="store_true", help="every game of --game created since --since")
    p.add_argument("--game", type=argtypes.game, metavar="G",
                   help=f"game type ({', '.join(registry.GAME_IDS)}), for --all (or to skip the look-up for GAME_ID)")
    p.add_argument("--since", help="with --all: a date or time (ISO 8601, UTC), e.g. 2026-11-01")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("audit", help="check a game's log: chain, seed, randomness, re-execution")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("game_id", nargs="?")
    src.add_argument("--file", help="an exported game (JSON lines)")
    p.add_argument("--all", action="store_true",
                   help="with --file: audit every game in it (an `export --all` file); exit 1 if any fails")
    p.add_argument("--game", type=argtypes.game, metavar="G",
                   help=f"game type ({', '.join(registry.GAME_IDS)}; skips the look-up)")
    p.add_argument("--json", action="store_true",
                   help="the report as JSON (with --all: a summary, and the report of each faulty game)")
    p.add_argument("--require-ended", action="store_true",
                   help="exit 1 for a log that does not end with TableEnded (a running game's, or one cut short), "
                        "as for a fault; without it such a log that holds so far exits 0, marked incomplete")
    p.set_defaults(func=cmd_audit)

    p = sub.add_parser("replay", help="the game as a viewer saw it at a step, and its moves in words")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("game_id", nargs="?")
    src.add_argument("--file", help="an exported game (JSON lines)")
    p.add_argument("--game", type=argtypes.game, metavar="G",
                   help=f"game type ({', '.join(registry.GAME_IDS)}; skips the look-up)")
    p.add_argument("--to", type=_seq, default=None, metavar="SEQ",
                   help="stop after the command whose events include this seq (default: the end)")
    p.add_argument("--as", dest="viewer", default="spectator", help="SEAT number, spectator or operator")
    p.add_argument("--json", action="store_true",
                   help="one JSON object: game_id, to (the last seq shown), as, view and moves (and log_fault for a "
                        "log at fault: a record at a seq already folded, passed over)")
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser("fork", help="a new table that starts from step SEQ of a game")
    p.add_argument("game_id")
    p.add_argument("--at", type=_seq, required=True, metavar="SEQ",
                   help="the last step of the origin the fork keeps: a seq of its log (1..its last) where a "
                        "command's events end")
    p.add_argument("--game", type=argtypes.game, metavar="G",
                   help=f"game type ({', '.join(registry.GAME_IDS)}; skips the look-up)")
    p.add_argument("--rules", type=argtypes.address, metavar="HOST:PORT",
                   help="a rules replica of that game type; default: every one Redis names, the owner of the fork's "
                        "partition first")
    p.add_argument("--command-id", type=_command_id, default=None, metavar="ID",
                   help="makes the fork retry-safe: the same GAME_ID, SEQ and ID name the same fork, made once "
                        "(default: a new one, printed, and named in the message of a failure worth retrying)")
    p.add_argument("--keep-cards", action="store_true",
                   help="keep the origin's hidden cards as they lay (hands, decks, face-down cards) instead of dealing "
                        "them again with the fork's own seed: the origin's record, open once it is over, then shows "
                        "them; for a 'what if' with the same hands, or to resume an interrupted game still running")
    p.set_defaults(func=cmd_fork)


COMMAND_ID_MAX = 100  # as the gateway's


def _command_id(text: str) -> str:
    if not 1 <= len(text) <= COMMAND_ID_MAX or not text.isprintable():
        raise argparse.ArgumentTypeError(f"a command id is 1..{COMMAND_ID_MAX} printable characters")
    return text


def fork_id(game_type: str, game_id: str, at: int, command_id: str, keep_cards: bool = False) -> str:
    """The id of the fork of game_id at `at` that command_id asks for: derived, so a retry
    names the same table (and the rules service answers it as the duplicate it is), and
    prefixed with its game type as the gateway's ids are (the gateway finds a table's type
    from its id before the read models know it). A fork that keeps the cards is another
    table than the one dealt again, whatever its command id."""
    import hashlib

    kept = ":kept" if keep_cards else ""
    digest = hashlib.sha256(f"fork:{game_id}:{at}:{command_id}{kept}".encode()).hexdigest()
    return f"{game_type}-{digest[:16]}"


def _kafka():
    from croupier.rules.settings import KafkaSettings

    return KafkaSettings.from_env()


_TYPES = {"game_id": (str,), "game_type": (str,), "type": (str,), "prev_hash": (str,), "hash": (str,),
          "seq": (int,), "version": (int,), "rules_version": (int,), "time": (int,), "payload": (dict,),
          "command_id": (str, type(None)), "seat": (int, type(None)), "cause": (dict, type(None))}


def _check_types(env: Envelope) -> None:
    """A file comes from anywhere: each field of the type the log writes, so that a hand-made
    line is refused by name rather than crashing the audit or the replay."""
    e = env
    if (type(e.seq) is int and type(e.version) is int and type(e.rules_version) is int and type(e.time) is int
            and type(e.payload) is dict and type(e.game_id) is str and type(e.type) is str
            and type(e.prev_hash) is str and type(e.hash) is str and (e.cause is None or type(e.cause) is dict)
            and (e.seat is None or type(e.seat) is int) and (e.command_id is None or type(e.command_id) is str)
            and e.game_type in registry.GAME_IDS):
        return  # the usual case, quickly: an audit reads millions of lines
    for name, kinds in _TYPES.items():
        value = getattr(env, name)
        if not isinstance(value, kinds) or isinstance(value, bool):
            raise ValueError(f"{name} is {type(value).__name__}, not {' or '.join(k.__name__ for k in kinds)}")
    if env.game_type not in registry.GAME_IDS:
        raise ValueError(f"no game type {env.game_type!r}")


def read_file(path: Path) -> dict[str, list[Envelope]]:
    """An exported file's envelopes, by game, each game's in file order."""
    if not path.exists():
        raise Rejection("no_such_file", f"{path} does not exist", "not_found")
    if not path.is_file():
        raise Rejection("bad_file", f"{path} is not a file", "malformed")
    games: dict[str, list[Envelope]] = {}
    n = 0
    try:
        with path.open(encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                if line.strip():
                    try:
                        env = Envelope.from_dict(loads(line))
                        _check_types(env)
                    except (ValueError, TypeError, KeyError, AttributeError) as exc:
                        raise Rejection("bad_file", f"{path}:{n}: not an envelope: {exc}", "malformed") from None
                    games.setdefault(env.game_id, []).append(env)
    except UnicodeDecodeError:
        raise Rejection("bad_file", f"{path}:{n + 1}: not UTF-8 text (an export is JSON lines)", "malformed") from None
    except OSError as exc:
        raise Rejection("bad_file", f"{path}: {exc.strerror or exc}", "malformed") from None
    if not games:
        raise Rejection("empty", f"{path} holds no events", "malformed")
    return games


# A game id is what the rules service takes (croupier.rules.service.MAX_ID): one that is not
# names no game, so it is refused before Kafka is scanned for it.
GAME_ID_MAX = 128


def _shown(text: str, limit: int = 60) -> str:
    """A value from the command line, in a one-line message: quoted when it holds what a
    terminal would not show as it is, and cut."""
    shown = text if text.isprintable() and text.strip() == text and text else repr(text)
    return shown if len(shown) <= limit else f"{shown[:limit]}... ({len(text):,} characters)"


def _check_game_id(game_id: str) -> None:
    if not game_id or len(game_id) > GAME_ID_MAX or not game_id.isprintable():
        raise Rejection("bad_game_id", f"GAME_ID {_shown(game_id)} is not a game id (1..{GAME_ID_MAX} printable "
                        "characters): no game has it", "malformed")


def _file(args: argparse.Namespace) -> Path | None:
    """--file as a path, None when not given; an empty one (`--file "$F"` with F unset) is
    refused, not taken for no --file at all."""
    if getattr(args, "file", None) is None:
        return None
    if not args.file:
        raise Rejection("bad_file", "--file is empty: give the exported file (JSON lines)", "malformed")
    return Path(args.file)


def _check_game_type(args: argparse.Namespace, path: Path, games: dict[str, list[Envelope]]) -> None:
    """--game with --file says what the file holds: a file of another game type (the wrong
    file, or a game relabelled) is refused, not audited as what it claims to be."""
    want = getattr(args, "game", None)
    for game_id, envs in games.items():
        if want and envs[0].game_type != want:
            raise Rejection("wrong_game_type", f"--game {want}, but {path} holds {_shown(game_id, 40)}, a game of "
                            f"{envs[0].game_type}", "malformed")


def load(args: argparse.Namespace) -> list[Envelope]:
    path = _file(args)
    if path is not None:
        games = read_file(path)
        envelopes = [env for envs in games.values() for env in envs]
        ids = games.keys()
        if len(ids) > 1:
            what = ("audit them all with --all" if getattr(args, "func", None) is cmd_audit
                    else "replay takes a file of one game (croupier export GAME_ID)")
            # Which games and how many events each: one line of a game edited into another
            # game's id shows as a game of one event.
            which = ", ".join(f"{_shown(gid, 40)} ({len(envs)} event{'s' if len(envs) != 1 else ''})"
                              for gid, envs in list(games.items())[:3])
            raise Rejection("many_games", f"{path} holds {len(ids)} games; {what}: {which}"
                            f"{', ...' if len(ids) > 3 else ''}", "malformed")
        _check_game_type(args, path, games)
        return envelopes
    from croupier.rules.store import read_game

    _check_game_id(args.game_id)
    types = [args.game] if args.game else candidate_types(args.game_id)
    kafka = _kafka()
    for game_type in types:
        envelopes = read_game(kafka, args.game_id, [game_type])
        if envelopes:
            args.topic_game_type = game_type  # whose topic the log was read from (audit checks the events say so)
            return envelopes
    raise Rejection("no_such_game", f"no events for game {_shown(args.game_id)} in {', '.join(types)}", "not_found")


def candidate_types(game_id: str) -> list[str]:
    """The game types whose topics may hold game_id, in the order to read them: the type its
    id names first (the gateway's and fork's ids start with it, `<game_type>-`, and the
    gateway takes a table for that type), then the others. In the order of GAME_IDS, a
    nightfall game's audit read the partition of four other topics to its end first, and a
    record under its id in one of them (from outside the rules) was taken for its log."""
    named = [g for g in registry.GAME_IDS if game_id.startswith(f"{g}-")]
    return named + [g for g in registry.GAME_IDS if g not in named]


def _fail(args: argparse.Namespace, exc: Rejection) -> int:
    """2 for what was wrong with the command; 75 (as for Kafka or Redis away) when no rules
    replica answered, so the same command may work later. The line names the command
    (`croupier fork: ...`), as the other commands' do."""
    from croupier.cli.main import EXIT_UNAVAILABLE

    print(f"croupier {args.command}: {exc.message}", file=sys.stderr)
    return EXIT_UNAVAILABLE if exc.kind == "unavailable" else 2


def _emit(args: argparse.Namespace, text: str, *, made: str = "") -> int | None:
    """Write text to the standard output now (flushed), None once written. A redirect to a
    full disk (or any other output error) is one line and exit 2, as for an --out that cannot
    be written: not a traceback with exit 1, the code of an audit that found a fault. `made`
    says what the command did before it could say so (a fork). A reader that went away (`|
    head`) is still main's BrokenPipeError: exit 0, nothing said."""
    import os

    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        # What stayed in the buffer would fail again at exit (exit 120): it goes nowhere.
        with contextlib.suppress(Exception):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return _fail(args, Rejection("bad_out", f"cannot write the standard output: {exc.strerror or exc}{made}",
                                     "malformed"))
    return None


def cmd_export(args: argparse.Namespace) -> int:
    try:
        if args.out is not None and not args.out:
            raise Rejection("bad_out", "--out is empty: give a file to write, or leave --out out for the standard "
                            "output", "malformed")
        if args.all and args.game_id is not None:
            # It exported every game of --game, the one named ignored.
            raise Rejection("game_id_and_all", f"give GAME_ID ({_shown(args.game_id)}) or --all --game G, not both",
                            "malformed")
        if args.since is not None and not args.all:
            raise Rejection("since_without_all", "--since picks the games of --all --game G; a GAME_ID is exported "
                            "whole", "malformed")
        if args.all:
            if not args.game:
                raise Rejection("missing_game", "--all needs --game G", "malformed")
            registry.get(args.game)
            since = 0
            if args.since is not None:
                try:
                    when = dt.datetime.fromisoformat(args.since)
                except ValueError:
                    raise Rejection("bad_since", f"--since {args.since!r} is not an ISO date", "malformed") from None
                if when.tzinfo is None:
                    when = when.replace(tzinfo=dt.UTC)
                since = int(when.timestamp() * 1000)
            from croupier.rules.store import NoSuchTopic, read_topic_games

            kafka = _kafka()
            try:
                games = read_topic_games(kafka, args.game, since)
            except NoSuchTopic as exc:
                raise Rejection("no_such_topic", f"Kafka at {kafka.bootstrap} has no topic {exc.topic}: no game of "
                                f"{args.game} was logged there, or CROUPIER_TOPIC_PREFIX "
                                f"({kafka.topic_prefix!r}) is not the services'", "not_found") from None
            lines = [env.to_json() for envs in games.values() for env in envs]
        else:
            if args.game_id is None:
                raise Rejection("missing_game_id", "give a GAME_ID, or --all --game G", "malformed")
            lines = [env.to_json() for env in load(args)]
    except Rejection as exc:
        return _fail(args, exc)
    text = "\n".join(lines) + ("\n" if lines else "")
    if args.out is None:
        return _emit(args, text) or 0
    try:
        _write_out(args.out, text)
    except OSError as exc:
        return _fail(args, Rejection("bad_out", f"cannot write {args.out}: {exc.strerror or exc}; nothing written",
                                     "malformed"))
    print(f"wrote {len(lines)} events to {args.out}", file=sys.stderr)
    return 0


def _write_out(name: str, text: str) -> None:
    """Write an export whole or not at all: to a file beside it, then renamed over it. A write
    that fails (a full disk, a quota) leaves no partial export that would later audit as a
    log cut short (`INCOMPLETE, clean so far`), and leaves a file already there as it was.
    What is not a regular file (/dev/stdout, a pipe) is written to as it is."""
    import os
    import tempfile

    path = Path(os.path.realpath(name))  # through a symlink: the file it names is replaced, not the link
    if path.exists() and not path.is_file():
        if path.is_dir():
            raise IsADirectoryError(21, "Is a directory")
        with path.open("w", encoding="utf-8") as fh:
            fh.write(text)
        return
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    except PermissionError:
        if not path.is_file():
            raise
        # A file the operator may write in a directory they may not: written in place.
        path.write_text(text, encoding="utf-8")
        return
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        if path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o7777)
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)  # as open() would have made it, not mkstemp's 0600
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def cmd_audit(args: argparse.Namespace) -> int:
    from croupier.engine.audit import audit, check_origin, fork_origin

    if args.all:
        return _audit_all(args)
    try:
        envelopes = load(args)
        report = audit(envelopes)
        topic_type = getattr(args, "topic_game_type", None)
        stray = next((e for e in envelopes if e.game_type != topic_type), None) if topic_type else None
        if stray is not None and report.ok:
            # A game of another type written into this topic (from outside the rules): it
            # re-runs clean as what it says it is, but the projector passes over its records
            # (wrong_game_type) and no rules service of that type reads this topic.
            report.fault(stray.seq, "topic", f"recorded {stray.type} says game type {_shown(stray.game_type, 40)}, "
                         f"but it is in the topic of {topic_type} ({_kafka().topic(topic_type)}): no service of "
                         f"{_shown(stray.game_type, 40)} folds it there, and the projector passes over it")
        origin = fork_origin(envelopes)
        if origin is not None and report.ok and _file(args) is None:
            # A fork: the origin's log it carries is checked against the origin's own log.
            from croupier.rules.store import read_game

            check_origin(report, envelopes, read_game(_kafka(), origin["game_id"], [envelopes[0].game_type]))
    except Rejection as exc:
        return _fail(args, exc)
    text = json.dumps(report.as_dict(), indent=2, sort_keys=True) if args.json else _verdict(report)
    return _emit(args, text + "\n") or (0 if report.ok and (report.ended or not args.require_ended) else 1)


def _verdict(report) -> str:
    """The one line of a game's audit. A log that does not end with TableEnded holds only so
    far, and its seed is not revealed yet: said so, never "seed holds"."""
    name = f"{report.game_id} ({report.game_type})"
    if not report.ok:
        f = report.faults[0]
        return f"{name}: FAULT at seq {f['seq']} ({f['check']}): {f['what']}"
    counts = (f"{report.events} events, {report.commands} commands re-executed, "
              f"{report.draws} random draws verified")
    unchecked = ("; a fork, checked against the origin's log it carries only (its origin's own log was not at "
                 "hand: audit GAME_ID from Kafka, or an `export --all` file holding both)"
                 if report.origin_checked is False else "")
    noted = ""
    if report.notes:
        n = report.notes[0]
        more = f" (and {len(report.notes) - 1} more; --json lists them)" if len(report.notes) > 1 else ""
        noted = f"; NOTE at seq {n['seq']} ({n['check']}): {n['what']}{more}"
    if report.ended:
        return f"{name}: clean — {counts}, hash chain and seed hold{unchecked}{noted}"
    return (f"{name}: INCOMPLETE, clean so far — the log ends at seq {report.last_seq} without TableEnded "
            f"(the table is {report.status}); {counts}, hash chain holds; the seed is not revealed yet{unchecked}"
            f"{noted}")


def _audit_all(args: argparse.Namespace) -> int:
    from croupier.engine.audit import audit, check_origin, fork_origin

    if args.file is None:
        return _fail(args, Rejection("missing_file", "--all audits an exported file: give --file FILE", "malformed"))
    try:
        path = _file(args)
        games = read_file(path)
        _check_game_type(args, path, games)
    except Rejection as exc:
        return _fail(args, exc)
    reports = [audit(envs) for envs in games.values()]
    for report, envs in zip(reports, games.values()):
        origin = fork_origin(envs)
        if origin is not None and origin["game_id"] in games:  # a fork whose origin the file holds too
            check_origin(report, envs, games[origin["game_id"]])
    bad = [r for r in reports if not r.ok]
    unfinished = [r for r in reports if r.ok and not r.ended]
    summary = {
        "ok": not bad,
        "games": len(reports),
        "clean": len(reports) - len(bad),
        # Of the clean, those whose log does not end with TableEnded (clean so far).
        "unfinished": len(unfinished),
        "unfinished_games": [r.game_id for r in unfinished],
        "events": sum(r.events for r in reports),
        "commands": sum(r.commands for r in reports),
        "draws": sum(r.draws for r in reports),
        "faulty": [r.as_dict() for r in bad],
        # Of the clean, those with a note (AuditReport.notes: no rule broken, but worth knowing).
        "noted": [r.as_dict() for r in reports if r.ok and r.notes],
    }
    if args.json:
        lines = [json.dumps(summary, indent=2, sort_keys=True)]
    else:
        shown = bad + (unfinished if args.require_ended else [])
        lines = [_verdict(r) for r in shown + [r for r in reports if r.ok and r.notes and r not in shown]]
        so_far = (f" ({len(unfinished)} of them INCOMPLETE: the log does not end with TableEnded, clean so far)"
                  if unfinished else "")
        lines.append(f"{summary['clean']} of {summary['games']} games clean{so_far} — {summary['events']} events, "
                     f"{summary['commands']} commands re-executed, {summary['draws']} random draws verified")
    return _emit(args, "\n".join(lines) + "\n") or (0 if not bad and not (args.require_ended and unfinished) else 1)


def cmd_replay(args: argparse.Namespace) -> int:
    from croupier.engine.audit import folded, format_fault, moves, step_end, view_as
    from croupier.engine.envelope import verify_chain

    viewer = args.viewer
    if viewer not in ("spectator", "operator"):
        if not (viewer.isascii() and viewer.isdigit() and len(viewer) <= 2):
            return _fail(args, Rejection("bad_viewer", "--as takes a seat number, spectator or operator", "malformed"))
        viewer = str(int(viewer))
    try:
        envelopes = load(args)
        # What the rules services folded, and the players saw (a record at a seq already
        # folded is passed over; a seq missing is refused: log_gap).
        log = folded(envelopes)
        problem = format_fault(log)
        if problem is not None:
            raise Rejection("bad_log", f"these events cannot be replayed: seq {problem[0]}: {problem[1]}; "
                            "`croupier audit` says where the log is at fault", "malformed")
        view = view_as(log, args.to, viewer)
        listing = moves(log, args.to, viewer)
        end = step_end(log, args.to)
        # The log as recorded: an event altered, a record written again or at a seq already
        # taken. The replay still shows the game as it was folded, and says the log is at fault.
        fault = verify_chain(envelopes)
    except Rejection as exc:
        if exc.code == "log_gap":
            exc = Rejection(exc.code, f"these events cannot be replayed: {exc.message}; `croupier audit` says "
                            "where the log is at fault", exc.kind)
        return _fail(args, exc)
    except ConfigError:
        raise  # a bad setting: main's one line and exit 2, not a fault of the log
    except (ValueError, LookupError, TypeError, AttributeError) as exc:
        # Events the game's codec does not know (a log relabelled, say), or contents not in
        # the shape the engine writes them.
        detail = str(exc) if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}"
        return _fail(args, Rejection("bad_log", f"these events cannot be replayed: {detail}; `croupier audit` says "
                                     "where the log is at fault", "malformed"))
    log_fault = {"seq": fault.seq, "check": "chain", "what": fault.what} if fault else None
    if args.json:
        text = json.dumps({"game_id": envelopes[0].game_id, "to": end, "as": viewer, "view": view, "moves": listing,
                           "log_fault": log_fault}, indent=2, sort_keys=True)
    else:
        text = "\n".join([f"{envelopes[0].game_id} ({envelopes[0].game_type}) as {viewer}, at seq {end}", *listing,
                          "\nview:", json.dumps(view, indent=2, sort_keys=True)])
    written = _emit(args, text + "\n")
    if written is not None:
        return written
    if fault is None:
        return 0
    # Shown, but not a log that holds: exit 1, as an audit that finds this fault does.
    print(f"croupier replay: the log of {_shown(envelopes[0].game_id)} is at fault at seq {fault.seq}: {fault.what}; "
          "shown as the rules services fold it (each seq from its first record); `croupier audit` checks it",
          file=sys.stderr)
    return 1


def cmd_fork(args: argparse.Namespace) -> int:
    import asyncio
    import secrets

    from croupier.rules.client import RulesClient
    from croupier.rules.errors import RETRYABLE
    from croupier.v1 import rules_pb2

    cid = args.command_id or secrets.token_hex(12)
    try:
        envelopes = load(args)
        _check_fork_point(args.game_id, envelopes, args.at)
        game_type = envelopes[0].game_type
        new_id = fork_id(game_type, args.game_id, args.at, cid, args.keep_cards)
        addresses = [args.rules] if args.rules else _replicas(game_type, new_id)
    except Rejection as exc:
        return _fail(args, exc)

    async def go():
        # Every replica Redis names, in turn: the client moves on from one that does not
        # answer (a stale owner) and follows a not_owner answer to the owner it names.
        client = RulesClient(addresses)
        try:
            return await client.call("ForkGame", rules_pb2.ForkGameRequest(
                game_type=game_type, game_id=new_id, origin_game_id=args.game_id, at_seq=args.at,
                command_id=f"fork:{cid}", keep_cards=args.keep_cards))
        finally:
            await client.close()

    try:
        result = asyncio.run(go()).result
        version, duplicate = result.version, result.duplicate
    except Rejection as exc:
        made = _made_by(new_id, game_type, cid, args) if exc.code == "already_exists" else None
        if made is None:
            if exc.kind in RETRYABLE:
                exc = Rejection(exc.code, f"{exc.message}; the fork may or may not have been made: run it again with "
                                f"--command-id {cid} to get the same fork ({new_id}), made once", "unavailable")
            return _fail(args, exc)
        version, duplicate = made, True
    made = (f"; the fork {new_id} was made (command id {cid}: run it again with --command-id {cid} for its "
            "answer, made once)")
    return _emit(args, json.dumps({"game_id": new_id, "game_type": game_type, "command_id": cid,
                                   "origin": {"game_id": args.game_id, "seq": args.at}, "version": version,
                                   "duplicate": duplicate, "keep_cards": args.keep_cards}) + "\n", made=made) or 0


def _check_fork_point(game_id: str, envelopes: list[Envelope], at: int) -> None:
    """What the rules service would refuse of --at, told here from the log already read (the
    service's answer came after its deadline, as a failure worth retrying): a seq of the
    origin's log (ForkGame's bad_seq), where a command's events end (TableHost.fork's
    mid_command), in the log as the rules services fold it (audit.folded): a record written
    again at the log's end made its seq the 'end' and its command the one --at fell inside."""
    from croupier.engine.audit import folded

    log = folded(envelopes)
    last = log[-1].seq
    if not 1 <= at <= last:
        raise Rejection("bad_seq", f"--at {at} is past the end of {game_id}'s log: at_seq must be 1..{last}",
                        "malformed")
    check_fork_point(log, at)


def _made_by(new_id: str, game_type: str, cid: str, args: argparse.Namespace) -> int | None:
    """When the rules service refuses the fork's id as taken: the version the fork's own
    command left it at if the table of that id is this very fork (a retry long after the
    first try, when the service no longer remembers its command_id), else None."""
    from croupier.rules.store import read_game

    log = read_game(_kafka(), new_id, [game_type])
    first = log[0] if log else None
    if (first is None or first.command_id != f"fork:{cid}" or first.cause is None
            or (first.payload.get("origin") or {}).get("game_id") != args.game_id
            or (first.payload.get("origin") or {}).get("seq") != args.at):
        return None
    return first.command_end


def _replicas(game_type: str, game_id: str) -> list[str]:
    """The distinct rules replicas of a game type that Redis names, the owner of game_id's
    partition first."""
    import redis

    from croupier.rules.settings import RulesSettings
    from croupier.rules.store import partition_for

    settings = RulesSettings.from_env(game_type)
    r = redis.Redis.from_url(settings.redis_url)
    owners = {int(k): v.decode() for k, v in r.hgetall(f"{settings.key_prefix}croupier:owners:{game_type}").items()}
    if not owners:
        raise Rejection("no_replica", f"no rules replica of {game_type} is running", "unavailable")
    partitions = int(r.get(f"{settings.key_prefix}croupier:partitions:{game_type}") or 0)
    first = owners.get(partition_for(game_id, partitions)) if partitions else None
    return list(dict.fromkeys([a for a in [first, *sorted(set(owners.values()))] if a]))
