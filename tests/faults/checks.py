"""What must hold after every fault, checked against the Kafka log (the only truth):

- every command the gateway acknowledged is in the log exactly once, at the seqs it named;
- no command id, acknowledged or not (retried after an error), is in the log twice;
- every game's seqs run 1, 2, 3 ... with no gap and no duplicate, and its hash chain holds;
- every game audits clean (services/croupier/engine/audit.py);
- the read models in Redis are the fold of the log (the projector tests' comparison).
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict

import redis as redis_lib
from harness import read_model_views
from rules_driver import read_log

from croupier.engine import registry
from croupier.engine.audit import audit
from croupier.engine.envelope import verify_chain
from croupier.engine.table import TableHost
from croupier.projector.keys import Keys


def read_one(kafka: str, prefix: str, game_id: str, partitions: int) -> list:
    from croupier.rules.settings import KafkaSettings
    from croupier.rules.store import partition_for, read_partition

    settings = KafkaSettings(bootstrap=kafka, topic_prefix=prefix)
    topic = settings.topic(game_id.split("-", 1)[0])
    return [e for e in read_partition(settings, topic, partition_for(game_id, partitions), settle_s=30) if e.game_id == game_id]


def read_everything(kafka: str, prefix: str, games, partitions: int) -> dict[str, list]:
    """Every game's envelopes, from every partition of every game type's topic."""
    out: dict[str, list] = {}
    for game in games:
        out.update(read_log(kafka, f"{prefix}croupier.events.{game}", partitions))
    return out


def check_log(log: dict[str, list], recorder) -> tuple[dict, list[str]]:
    """Hold the log to what the clients were told. Returns figures and problems."""
    problems: list[str] = []
    causes: Counter = Counter()
    batches: dict[tuple[str, str], tuple[int, int]] = {}
    for game_id, envs in log.items():
        seqs = [e.seq for e in envs]
        if seqs != list(range(1, len(seqs) + 1)):
            dupes = [s for s, n in Counter(seqs).items() if n > 1]
            problems.append(f"{game_id}: seqs are not 1..{len(seqs)} (duplicates {dupes[:5]}, first {seqs[:8]})")
        fault = verify_chain(envs)
        if fault:
            problems.append(f"{game_id}: hash chain broken at {fault.seq}: {fault.what}")
        for e in envs:
            if e.cause is not None and e.command_id:
                causes[(game_id, e.command_id)] += 1
                batches[(game_id, e.command_id)] = (e.seq, e.seq + int(e.cause["events"]) - 1)
    for (game_id, cid), n in causes.items():
        if n > 1:
            problems.append(f"{game_id}: command {cid} appended {n} times")

    checked = lost = twice = 0
    for rec in recorder.sent.values():
        n = causes.get((rec.game_id, rec.log_id), 0)
        if n > 1:
            twice += 1
        if rec.ack is None:
            continue
        checked += 1
        span = batches.get((rec.game_id, rec.log_id))
        first, last = rec.ack
        if n != 1 or span is None:
            lost += 1
            problems.append(f"acknowledged {rec.kind} {rec.game_id} {rec.log_id} is in the log {n} times")
        elif span[1] != last or (first and span[0] != first):
            lost += 1
            problems.append(f"acknowledged {rec.kind} {rec.game_id} {rec.log_id} as seqs {rec.ack}, the log has {span}")
    problems.extend(f"two answers disagree: {m}" for m in recorder.mismatched)
    figures = {"checked": checked, "lost": lost, "in_log_twice": twice,
               "unacknowledged_in_log": sum(1 for r in recorder.sent.values()
                                            if r.ack is None and causes.get((r.game_id, r.log_id), 0) == 1)}
    return figures, problems


def check_audits(log: dict[str, list], game_ids) -> tuple[int, list[str]]:
    problems = []
    clean = 0
    for gid in game_ids:
        report = audit(log.get(gid, []))
        if report.ok:
            clean += 1
        else:
            problems.append(f"{gid}: audit {report.faults[:2]}")
    return clean, problems


def check_read_models(redis_url: str, prefix: str, log: dict[str, list], reread=None,
                      attempts: int = 20) -> tuple[int, list[str]]:
    """Each game's views hash and version in Redis against a fold of its log. A game whose
    timer fired after the log was read (delve's votes) is read again (`reread(game_id)`)
    and compared again: the read models must converge to the log, not be at one instant."""
    keys = Keys(prefix)
    r = redis_lib.Redis.from_url(redis_url)
    hosts: dict[str, TableHost] = {}
    problems = []
    same = 0
    try:
        for gid, envs in log.items():
            game_type = envs[0].game_type
            host = hosts.setdefault(game_type, TableHost(registry.get(game_type)))
            for attempt in range(attempts):
                state = host.fold(envs)
                stored = {k.decode(): v.decode() for k, v in r.hgetall(keys.views(gid)).items()}
                version = r.hget(keys.meta(gid), "version")
                if stored == read_model_views(host, state) and version is not None and int(version) == state.version:
                    same += 1
                    break
                if reread is None or attempt == attempts - 1:
                    problems.append(f"{gid}: read models at version {version!r}, the log's fold at {state.version}")
                    break
                time.sleep(0.5)
                envs = reread(gid)
    finally:
        r.close()
    return same, problems


def per_game_types(log: dict[str, list]) -> dict[str, int]:
    out: dict[str, int] = defaultdict(int)
    for envs in log.values():
        out[envs[0].game_type] += 1
    return dict(out)
