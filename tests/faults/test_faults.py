"""Break the real stack on purpose while at least 100 tables of every game type play through
the gateway, then check that nothing was lost, nothing doubled and every table can go on.

One scenario per fault (scenario() below): start the load, wait until it is warm, inject the
fault (from a thread, so the load keeps playing through it), wait for progress after the
recovery, stop the load, make one more legal move on every unfinished table, then hold the
Kafka log and the read models to what the clients were told (checks.py). The figures of
each fault are written to <results_dir>/<fault>.json and printed.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter

from checks import check_audits, check_log, check_read_models, per_game_types, read_everything, read_one
from fault_stack import PARTITIONS, SIGNING_KEY, FaultStack
from harness import wait_caught_up
from load import Load, TableDriver

TABLES = 100
EXTRA_TABLES = 20  # created while the fault is on


async def go_on(load: Load, timeout_s: float = 120) -> tuple[int, list[str]]:
    """A legal move on every table that is not over, each seen acknowledged."""
    load.stopping.clear()

    async def one(driver: TableDriver) -> str | None:
        deadline = time.monotonic() + timeout_s
        before = driver.moves
        while time.monotonic() < deadline:
            if not await driver.step():
                return None  # over: nothing more to play
            if driver.moves > before:
                return None
        return f"{driver.game_id}: no move accepted within {timeout_s} s (version {driver.version})"

    pending = [d for d in load.tables if not d.over]
    stuck = [s for s in await asyncio.gather(*(one(d) for d in pending)) if s]
    return len(pending) - len(stuck), stuck


def in_thread(fn, *args):
    return asyncio.get_running_loop().run_in_executor(None, fn, *args)


async def scenario(stack: FaultStack, results_dir, name: str, fault, *, send_twice: bool = False) -> dict:
    started = time.monotonic()
    phases: dict[str, float] = {}
    load = Load(stack.http_url, stack.grpc_address, SIGNING_KEY, send_twice=send_twice, seed=hash(name) & 0xFFFF)
    try:
        load.add_tables(TABLES)
        await load.wait_acked(TABLES * 4)  # created, seated, and playing
        at_fault = load.acked()
        phases["warm"] = time.monotonic()
        errors_before = sum(load.rec.errors.values())
        fault_started = time.monotonic()
        note = await fault(stack, load)
        fault_seconds = time.monotonic() - fault_started
        phases["fault"] = time.monotonic()
        errors_during = sum(load.rec.errors.values()) - errors_before
        await load.wait_acked(load.acked() + 150)  # the load goes on after the recovery
        await load.stop()
        phases["load_stopped"] = time.monotonic()
        await in_thread(stack.wait_ready)
        moved, stuck = await go_on(load)
        phases["went_on"] = time.monotonic()
    except BaseException as exc:
        # Keep what the clients saw: a failed fault test is read from this file and the logs.
        partial = {"fault": name, "failed": repr(exc)[:500], "counts": load.rec.counts(),
                   "errors_seen": dict(load.rec.errors.most_common(12)),
                   "phase_seconds": {k: round(v - started, 1) for k, v in phases.items()},
                   "seconds": round(time.monotonic() - started, 1), "logs": str(stack.log_dir)}
        (results_dir / f"{name}.json").write_text(json.dumps(partial, indent=2, sort_keys=True) + "\n")
        stack.broken = True
        print(f"\n{name} FAILED: {json.dumps(partial, indent=2, sort_keys=True)}")
        print(f"\nthe stack at the failure of {name}:\n{await in_thread(stack.diagnose)}")
        raise
    finally:
        await load.close()
    await in_thread(lambda: wait_caught_up(stack.redis_url, stack.prefix, [stack.projector], timeout=180))

    phases["caught_up"] = time.monotonic()
    log = await in_thread(read_everything, stack.kafka, stack.prefix, stack.games, PARTITIONS)
    ours = [d.game_id for d in load.tables]
    figures, problems = check_log(log, load.rec)
    clean, audit_problems = check_audits(log, ours)
    phases["checked_log"] = time.monotonic()
    same, model_problems = await in_thread(check_read_models, stack.redis_url, stack.prefix, log,
                                           lambda gid: read_one(stack.kafka, stack.prefix, gid, PARTITIONS))
    phases["checked_read_models"] = time.monotonic()
    counts = load.rec.counts()
    result = {
        "fault": name,
        "note": note,
        "tables": len(load.tables),
        "game_types": per_game_types({g: log[g] for g in ours if g in log}),
        "commands_sent": counts["commands_sent"],
        "attempts": counts["attempts"],
        "acknowledged": counts["acknowledged"],
        "acknowledged_before_fault": at_fault,
        "checked": figures["checked"],
        "lost": figures["lost"],
        "in_log_twice": figures["in_log_twice"],
        "retried_commands": counts["retried"],
        "retryable_errors": counts["retryable_errors"],
        "retryable_errors_during_fault": errors_during,
        "errors_seen": dict(load.rec.errors.most_common()),
        "refused": counts["refused"],
        "refused_codes": dict(Counter(r.refused for r in load.rec.sent.values() if r.refused)),
        "unacknowledged_but_in_log": figures["unacknowledged_in_log"],
        "tables_moved_on_after": moved,
        "tables_stuck": stuck,
        "games_in_log": len(log),
        "games_audited_clean": clean,
        "read_models_matching_log": same,
        "fault_seconds": round(fault_seconds, 1),
        "seconds": round(time.monotonic() - started, 1),
        "phase_seconds": {k: round(v - started, 1) for k, v in phases.items()},
        "problems": (problems + audit_problems + model_problems)[:30],
    }
    path = results_dir / f"{name}.json"
    path.write_text(json.dumps(result, indent=2, sort_keys=True) + "\n")
    print(f"\n{name}: {path}\n{json.dumps(result, indent=2, sort_keys=True)}")

    assert len(load.tables) >= TABLES
    assert not problems, problems[:10]
    assert figures["lost"] == 0 and figures["checked"] == counts["acknowledged"]
    assert not audit_problems, audit_problems[:10]
    assert not stuck, stuck[:10]
    assert not model_problems, model_problems[:10]
    return result


def run(coro):
    return asyncio.run(coro)


# -- the faults ------------------------------------------------------------------------------

async def kill_rules_replicas(stack: FaultStack, load: Load) -> str:
    """SIGKILL one of the two replicas of every game type: the other takes its partitions
    (after the group's session timeout) and the gateway follows; then a new replica joins
    and partitions move again, under load."""
    victims = {game: stack.rules[game][0] for game in stack.games}
    for game, svc in victims.items():
        svc.kill()
        stack.rules[game].remove(svc)
    load.add_tables(EXTRA_TABLES)
    await in_thread(lambda: stack.wait_ready(caught_up=False))  # the survivors own every partition
    await load.wait_acked(load.acked() + 100)
    for game in stack.games:
        stack.start_rules(game)
    await in_thread(lambda: stack.wait_ready(caught_up=False))
    return f"SIGKILL of one rules replica of each of {len(victims)} game types; a new replica joined after the takeover"


async def kill_projector(stack: FaultStack, load: Load) -> str:
    """SIGKILL the projector; writes go on (new tables are created and seated), reads go
    stale; a new projector folds on from the committed offsets and the stored versions."""
    stack.projector.kill()
    before = load.acked()
    load.add_tables(EXTRA_TABLES)
    await load.wait_acked(before + EXTRA_TABLES * 2)  # commands acknowledged while no projector runs
    during = load.acked() - before
    stack.start_projector()
    await in_thread(lambda: stack.wait_ready(caught_up=False))
    return f"SIGKILL of the projector; {during} commands acknowledged while it was down; restarted"


async def kill_gateway(stack: FaultStack, load: Load) -> str:
    """SIGKILL the gateway: clients lose their connections (HTTP and gRPC) and retry with the
    same command ids; a new gateway on the same ports takes them back."""
    transport_before = sum(n for k, n in load.rec.errors.items() if "transport" in k or k.startswith("503"))
    stack.gateway.kill()
    deadline = time.monotonic() + 60
    while sum(n for k, n in load.rec.errors.items() if "transport" in k or k.startswith("503")) < transport_before + 20:
        assert time.monotonic() < deadline, "no client noticed the gateway was gone"
        await asyncio.sleep(0.1)
    stack.start_gateway()
    load.add_tables(EXTRA_TABLES)
    await in_thread(lambda: stack.wait_ready(caught_up=False))
    return "SIGKILL of the gateway; restarted on the same ports; clients reconnected"


async def restart_kafka(stack: FaultStack, load: Load) -> str:
    """Stop the broker (as `croupier stack down` does) and start it again on its data."""
    await in_thread(stack.stop_kafka)
    load.add_tables(EXTRA_TABLES)
    await asyncio.sleep(0)  # the new tables' first requests meet the broker down
    down_errors = sum(load.rec.errors.values())
    await in_thread(stack.start_kafka)
    await in_thread(lambda: stack.wait_ready(caught_up=False))
    return f"Kafka stopped and started again (croupier stack code); {down_errors} retryable errors by then"


async def restart_redis_empty(stack: FaultStack, load: Load) -> str:
    """Stop Redis and start it again with no data (no persistence): read models, owners,
    seat holders and projector bookkeeping are gone. The services carry on, and the running
    projector folds the read models again by itself (no operator's rebuild): Redis's record
    of its offsets went with the data, and a partition with no entry is read from its start.
    The scenario's end checks every game's read models against the log."""
    await in_thread(stack.stop_redis)
    load.add_tables(EXTRA_TABLES)
    await in_thread(stack.start_redis)
    await in_thread(lambda: stack.wait_ready(caught_up=False))
    return "Redis stopped and started empty; the projector folded the log again by itself, no rebuild run"


async def no_fault(stack: FaultStack, load: Load) -> str:
    load.add_tables(EXTRA_TABLES)
    return "every command (create, join, move) sent twice with the same command_id, at once or one after the other"


def test_rules_replica_sigkill(fault_stack, results_dir):
    run(scenario(fault_stack, results_dir, "rules_replica_sigkill", kill_rules_replicas))


def test_projector_sigkill(fault_stack, results_dir):
    run(scenario(fault_stack, results_dir, "projector_sigkill", kill_projector))


def test_gateway_sigkill(fault_stack, results_dir):
    run(scenario(fault_stack, results_dir, "gateway_sigkill", kill_gateway))


def test_kafka_restart(fault_stack, results_dir):
    """The broker stopped and started again under load. (It was open until the replica took
    back the partitions the group revoked and gave straight back: docs/reliability.md.)"""
    run(scenario(fault_stack, results_dir, "kafka_restart", restart_kafka))


def test_redis_restart_without_data(fault_stack, results_dir):
    run(scenario(fault_stack, results_dir, "redis_restart_empty", restart_redis_empty))


def test_every_command_sent_twice(fault_stack, results_dir):
    run(scenario(fault_stack, results_dir, "every_command_twice", no_fault, send_twice=True))


def test_no_secret_in_any_log_of_the_faults(fault_stack):
    """Every service of the fault stack logged at debug level through kills, restarts and
    outages: none of its logs holds the signing key or the operator token."""
    from fault_stack import OPERATOR_TOKEN

    logs = sorted(path for d in fault_stack.log_dirs for path in d.glob("*.log"))
    assert len(logs) >= len(fault_stack.games) * 2 + 2
    for path in logs:
        text = path.read_text(errors="replace")
        assert SIGNING_KEY not in text, f"the signing key is in {path.name}"
        assert OPERATOR_TOKEN not in text, f"the operator token is in {path.name}"
