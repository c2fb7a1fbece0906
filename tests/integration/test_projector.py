"""The projector against real Kafka and Redis: restarts, rebuilds, redelivery."""

from __future__ import annotations

import asyncio
import contextlib
import json
import pickle
import random
import time
import uuid

import pytest
from harness import read_model_views, start_projector, start_rules, wait_caught_up, wait_owned
from rules_driver import play, read_log

from croupier.engine import registry
from croupier.engine.table import TableHost
from croupier.projector import feed
from croupier.projector.keys import Keys
from croupier.projector.models import Flush, ReadModels
from croupier.projector.service import ProjectorSettings, rebuild
from croupier.rules.client import RulesClient
from croupier.rules.settings import KafkaSettings

GAME = "expeditions"
PARTITIONS = 4


def snapshot(redis, prefix: str) -> dict:
    """Every read-model key of the namespace, by value (state snapshots unpickled)."""
    out = {}
    for raw in redis.scan_iter(match=f"{prefix}*"):
        key = raw.decode()
        rest = key[len(prefix):]
        if rest.startswith(("projector:", "croupier:")):
            continue
        kind = redis.type(raw).decode()
        if kind == "hash":
            out[key] = {k.decode(): v.decode() for k, v in redis.hgetall(raw).items()}
        elif kind == "zset":
            out[key] = [(m.decode(), s) for m, s in redis.zrange(raw, 0, -1, withscores=True)]
        elif kind == "string":
            value = redis.get(raw)
            out[key] = pickle.loads(value) if key.endswith(":state") else value
        else:
            out[key] = kind
    return out


def drive(addr: str, games: int, moves: int, seed: int, game: str = GAME, partitions: set[int] | None = None) -> list[str]:
    """`games` games of `moves` moves each; with `partitions`, games of those partitions only
    (each of them taken in turn)."""
    from croupier.rules.store import partition_for

    def new_id(i: int) -> str:
        if not partitions:
            return uuid.uuid4().hex
        want = sorted(partitions)[i % len(partitions)]
        while partition_for(gid := uuid.uuid4().hex, PARTITIONS) != want:
            pass
        return gid

    async def main():
        client = RulesClient(addr, deadline_s=30)
        ids = [new_id(i) for i in range(games)]
        await asyncio.gather(*(play(client, game, g, 2 + i % 3, moves, {}, random.Random(seed + i), pause=0.01)
                               for i, g in enumerate(ids)))
        await client.close()
        return ids

    return asyncio.run(main())


def expected_views(kafka: str, prefix: str, game: str = GAME) -> dict[str, dict]:
    """A fold of the log in process: each game's views as the projector must have them."""
    host = TableHost(registry.get(game))
    log = read_log(kafka, f"{prefix}croupier.events.{game}", PARTITIONS)
    out = {}
    for game_id, envs in log.items():
        state = host.fold(envs)
        out[game_id] = {"views": read_model_views(host, state), "version": str(state.version)}
    return out


def _rules_and_projector(kafka: str, redis_url: str, prefix: str, tmp_path, services) -> tuple[str, object]:
    """A rules replica of GAME serving every partition, and a projector process: (the
    replica's address, the projector)."""
    rules, addr = start_rules(GAME, kafka, redis_url, prefix, tmp_path)
    services.append(rules)
    wait_owned(redis_url, prefix, GAME, PARTITIONS, services=[rules])
    projector = start_projector(kafka, redis_url, prefix, tmp_path)
    services.append(projector)
    return addr, projector


def _lose_everything(redis, prefix: str) -> None:
    """Redis loses every key of this namespace but the rules replicas' owners."""
    redis.delete(*[k for k in redis.scan_iter(match=f"{prefix}*") if b"croupier:" not in k])


def _until_snapshot_is(redis, prefix: str, expected: dict, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while snapshot(redis, prefix) != expected and time.monotonic() < deadline:
        time.sleep(0.5)


def settings_for(kafka: str, redis_url: str, prefix: str) -> ProjectorSettings:
    return ProjectorSettings(redis_url=redis_url, key_prefix=prefix, finished_ttl_s=0, metrics_port=0, max_records=5000,
                             kafka=KafkaSettings(bootstrap=kafka, topic_prefix=prefix, partitions=PARTITIONS))


def test_killed_and_restarted_projector_converges_to_the_log_and_to_a_rebuild(kafka, redis_url, redis, prefix, services, tmp_path):
    addr, projector = _rules_and_projector(kafka, redis_url, prefix, tmp_path, services)

    import threading

    ids: list[str] = []
    worker = threading.Thread(target=lambda: ids.extend(drive(addr, 6, 40, 10)))
    worker.start()
    import time

    time.sleep(3)
    projector.kill()  # mid-stream, no goodbye
    time.sleep(1)
    projector = start_projector(kafka, redis_url, prefix, tmp_path)
    services.append(projector)
    worker.join()
    wait_caught_up(redis_url, prefix, [projector])

    after_restart = snapshot(redis, prefix)
    keys = Keys(prefix)
    expected = expected_views(kafka, prefix)
    assert set(ids) <= set(expected)
    for game_id, want in expected.items():
        assert after_restart[keys.views(game_id)] == want["views"], game_id
        assert after_restart[keys.meta(game_id)]["version"] == want["version"]

    out = rebuild(settings_for(kafka, redis_url, prefix))
    wait_caught_up(redis_url, prefix, [projector], epoch=out["epoch"])
    after_rebuild = snapshot(redis, prefix)
    assert after_rebuild.keys() == after_restart.keys()
    for key in after_restart:
        assert after_rebuild[key] == after_restart[key], key


def test_a_projector_taking_two_records_a_batch_catches_up_to_the_log(kafka, redis_url, redis, prefix, services,
                                                                       tmp_path):
    """The real consumer cut into batches of two records (CROUPIER_PROJECTOR_MAX_RECORDS=2),
    so most commands of several events arrive split: the projector folds delve's games to the
    log (delve, whose view of a half-applied command raised IndexError and ended it)."""
    game = "delve"
    rules, addr = start_rules(game, kafka, redis_url, prefix, tmp_path)
    services.append(rules)
    wait_owned(redis_url, prefix, game, PARTITIONS, services=[rules])
    ids = drive(addr, 4, 60, 21, game=game)
    keys = Keys(prefix)
    published: list[tuple[str, bytes]] = []  # every feed message of the catch-up
    pubsub = redis.pubsub()
    pubsub.psubscribe(keys.feed("*"))  # read after the catch-up: Redis keeps them till then
    try:
        projector = start_projector(kafka, redis_url, prefix, tmp_path, CROUPIER_PROJECTOR_MAX_RECORDS="2")
        services.append(projector)
        wait_caught_up(redis_url, prefix, [projector])
        assert projector.alive()
        while (message := pubsub.get_message(timeout=1.0)) is not None:
            if message["type"] == "pmessage":
                published.append((message["channel"].decode(), message["data"]))
    finally:
        pubsub.close()
    got = snapshot(redis, prefix)
    expected = expected_views(kafka, prefix, game)
    assert set(ids) <= set(expected)
    log = read_log(kafka, f"{prefix}croupier.events.{game}", PARTITIONS)
    for game_id, want in expected.items():
        assert got[keys.views(game_id)] == want["views"], game_id
        assert got[keys.meta(game_id)]["version"] == want["version"]
    # Every version the projector showed on the way is the end of a whole command.
    ends = {gid: {e.seq + e.cause["events"] - 1 for e in envs if e.cause} for gid, envs in log.items()}
    assert any(e.cause and e.cause["events"] > 1 for envs in log.values() for e in envs)
    shown = [(channel, feed.version_of(data) or int(data)) for channel, data in published]
    assert len(shown) > len(log)
    for channel, version in shown:
        game_id = next(g for g in log if channel == keys.feed(g))
        assert version in ends[game_id], (game_id, version)


def test_redis_losing_its_data_is_restored_by_a_rebuild(kafka, redis_url, redis, prefix, services, tmp_path):
    addr, projector = _rules_and_projector(kafka, redis_url, prefix, tmp_path, services)
    drive(addr, 4, 25, 20)
    wait_caught_up(redis_url, prefix, [projector])
    before = snapshot(redis, prefix)
    assert before

    # Redis loses everything of this namespace while the projector runs.
    _lose_everything(redis, prefix)
    assert snapshot(redis, prefix) == {}

    out = rebuild(settings_for(kafka, redis_url, prefix))
    wait_caught_up(redis_url, prefix, [projector], epoch=out["epoch"])
    assert snapshot(redis, prefix) == before


def test_redis_losing_its_data_under_a_running_projector_is_folded_again_without_a_rebuild(
        kafka, redis_url, redis, prefix, services, tmp_path):
    """The same loss, no rebuild asked for and no restart seen (a flush, say): the projector's
    record of offsets went with the data, which its once-a-second check of the record finds,
    and it folds its partitions again from their start (no entry in the record: from the
    start), also what an earlier projector folded (this one started after it). Before, the
    read models stayed empty until an operator ran `croupier projector rebuild`."""
    addr, earlier = _rules_and_projector(kafka, redis_url, prefix, tmp_path, services)
    first = drive(addr, 3, 20, 25)
    wait_caught_up(redis_url, prefix, [earlier])
    earlier.stop()
    projector = start_projector(kafka, redis_url, prefix, tmp_path)
    services.append(projector)
    second = drive(addr, 3, 20, 26)
    _wait_for_metas(redis, prefix, first + second)
    wait_caught_up(redis_url, prefix, [projector])
    before = snapshot(redis, prefix)
    assert all(Keys(prefix).meta(g) in before for g in first + second)
    assert before

    _lose_everything(redis, prefix)
    _until_snapshot_is(redis, prefix, before)
    assert snapshot(redis, prefix) == before


def test_redis_losing_its_data_while_no_projector_runs_is_folded_by_the_next_one(kafka, redis_url, redis, prefix,
                                                                                 services, tmp_path):
    """The loss while no projector is up: the next one finds no record of offsets, so it reads
    every partition from its start, not from the group's committed offsets (past everything
    that was lost). No rebuild is run."""
    addr, earlier = _rules_and_projector(kafka, redis_url, prefix, tmp_path, services)
    games = drive(addr, 3, 20, 27)
    _wait_for_metas(redis, prefix, games)
    wait_caught_up(redis_url, prefix, [earlier])
    before = snapshot(redis, prefix)
    earlier.stop()

    _lose_everything(redis, prefix)
    projector = start_projector(kafka, redis_url, prefix, tmp_path)
    services.append(projector)
    _until_snapshot_is(redis, prefix, before)
    assert snapshot(redis, prefix) == before


def test_a_rebuild_while_no_projector_is_up_is_folded_by_the_next_one(kafka, redis_url, redis, prefix, services, tmp_path):
    """The dead projector is still a group member, so the rebuild cannot reset offsets: the
    next projector must see the unacknowledged rebuild and re-read from zero itself."""
    addr, projector = _rules_and_projector(kafka, redis_url, prefix, tmp_path, services)
    drive(addr, 3, 20, 30)
    wait_caught_up(redis_url, prefix, [projector])
    before = snapshot(redis, prefix)
    assert before
    projector.kill()

    # No projector folds it: a rebuild that waits says so (the dead one's last lag readings,
    # all zero, are not taken for the fold's).
    out = rebuild(settings_for(kafka, redis_url, prefix), wait_s=2)
    assert out["caught_up"] is False
    assert snapshot(redis, prefix) == {}
    projector = start_projector(kafka, redis_url, prefix, tmp_path)
    services.append(projector)
    wait_caught_up(redis_url, prefix, [projector], epoch=out["epoch"])
    assert snapshot(redis, prefix) == before


def _wait_assigned(service, timeout: float = 60) -> None:
    """Until the projector's log says it was given partitions."""
    deadline = time.monotonic() + timeout
    while True:
        for line in service.log_path.read_text(errors="replace").splitlines():
            if '"partitions_assigned"' in line and json.loads(line).get("partitions", 0) > 0:
                return
        assert service.alive(), service.tail()
        assert time.monotonic() < deadline, f"no partitions assigned:\n{service.tail()}"
        time.sleep(0.2)


def test_a_rebuild_waits_for_every_projector_of_the_group(kafka, redis_url, redis, prefix, services, tmp_path):
    """Two projectors share the partitions: with one of them stopped, the other catching up on
    its own is not the rebuild caught up; --wait names the partitions still waiting."""
    import signal

    addr, first = _rules_and_projector(kafka, redis_url, prefix, tmp_path, services)
    ids = drive(addr, 4, 20, 40)
    wait_caught_up(redis_url, prefix, [first])
    second = start_projector(kafka, redis_url, prefix, tmp_path)
    services.append(second)
    _wait_assigned(second)
    wait_caught_up(redis_url, prefix, [first, second])

    second.proc.send_signal(signal.SIGSTOP)  # a member still (6 s of session), folding nothing
    try:
        out = rebuild(settings_for(kafka, redis_url, prefix), wait_s=2)
        assert out["caught_up"] is False
        assert out["waiting_on"], out
        assert all(p.startswith(f"{prefix}croupier.events.") for p in out["waiting_on"])
    finally:
        second.proc.send_signal(signal.SIGCONT)
    out = rebuild(settings_for(kafka, redis_url, prefix), wait_s=90)
    assert out["caught_up"] is True, out
    got = snapshot(redis, prefix)
    expected = expected_views(kafka, prefix)
    assert set(ids) <= set(expected)
    keys = Keys(prefix)
    for game_id, want in expected.items():
        assert got[keys.views(game_id)] == want["views"], game_id


def test_the_same_events_delivered_twice_change_nothing(redis, prefix):
    spec = registry.get(GAME)
    from croupier.engine.selfplay import SelfplayReport, play_one

    table = play_one(spec, seats=2, seat_bots=["random", "random"], options=spec.parse_options({}), seed=5, index=0,
                     report=SelfplayReport(game=GAME), check_all_legal=False, max_steps=40)
    host = table.host
    models = ReadModels(redis, Keys(prefix))
    envs = table.envelopes
    half = len(envs) // 2
    state = host.fold(envs[:half])
    assert models.apply([Flush(table.game_id, GAME, 1, state)], {GAME: host}) == [1]
    once = snapshot(redis, prefix)
    # Redelivered: the same batch again.
    assert models.apply([Flush(table.game_id, GAME, 1, state)], {GAME: host}) == [0]
    assert snapshot(redis, prefix) == once
    # A batch that skips events is refused, not written.
    later = host.fold(envs)
    assert models.apply([Flush(table.game_id, GAME, half + 5, later)], {GAME: host}) == [-1]
    assert snapshot(redis, prefix) == once
    # The next batch in order applies.
    assert models.apply([Flush(table.game_id, GAME, half + 1, later)], {GAME: host}) == [1]
    assert json.loads(redis.hget(Keys(prefix).meta(table.game_id), "version")) == later.version


def test_an_applied_update_is_published_with_the_views_it_wrote(redis, prefix):
    """The feed message of an applied batch carries what the views hash now holds (the
    gateway hands it out without reading); a refused batch publishes nothing."""
    spec = registry.get(GAME)
    from croupier.engine.selfplay import SelfplayReport, play_one

    table = play_one(spec, seats=3, seat_bots=["random"] * 3, options=spec.parse_options({}), seed=9, index=0,
                     report=SelfplayReport(game=GAME), check_all_legal=False, max_steps=30)
    host, keys, envs = table.host, Keys(prefix), table.envelopes
    models = ReadModels(redis, keys)
    pubsub = redis.pubsub(ignore_subscribe_messages=True)
    pubsub.subscribe(keys.feed(table.game_id))
    try:
        assert pubsub.get_message(timeout=5) is None  # the subscription is confirmed
        state = host.fold(envs)
        assert models.apply([Flush(table.game_id, GAME, len(envs) + 5, state)], {GAME: host}) == [-1]
        assert models.apply([Flush(table.game_id, GAME, 1, state)], {GAME: host}) == [1]
        message = pubsub.get_message(timeout=5)
        assert pubsub.get_message(timeout=0.5) is None  # one message: the refused batch sent none
    finally:
        pubsub.close()
    got = feed.decode(message["data"])
    assert got is not None and got.version == state.version == len(envs)
    assert got.status == redis.hget(keys.meta(table.game_id), "status").decode()
    assert got.fields == redis.hgetall(keys.views(table.game_id))
    assert set(got.fields) == {b"spectator", b"0", b"1", b"2", b"actions:0", b"actions:1", b"actions:2"}


class _Record:
    """A consumed record as the fold reads it (value, topic, partition, offset)."""

    def __init__(self, topic: str, partition: int, offset: int, value: bytes, key: bytes | None = None):
        self._topic, self._partition, self._offset, self._value = topic, partition, offset, value
        self._key = key if key is not None else json.loads(value)["game_id"].encode()

    def key(self) -> bytes:
        return self._key

    def value(self) -> bytes:
        return self._value

    def topic(self) -> str:
        return self._topic

    def partition(self) -> int:
        return self._partition

    def offset(self) -> int:
        return self._offset


@pytest.mark.parametrize("game", registry.GAME_IDS)
def test_a_batch_that_ends_inside_a_command_is_never_shown_half_applied(redis, redis_url, prefix, game):
    """A consume may end inside one command's events (a transaction's records are not fetched
    as a unit). The read models only ever show the state after a whole command, as the rules
    service did; the rest waits for the next batch, and its records are not committed."""
    from croupier.engine.selfplay import SelfplayReport, play_one
    from croupier.projector.service import Projector
    from croupier.rules.store import encode_record

    spec = registry.get(game)
    seats = spec.max_seats
    table = play_one(spec, seats=seats, seat_bots=["random"] * seats, options=spec.parse_options({}), seed=11,
                     index=0, report=SelfplayReport(game=game), check_all_legal=False, max_steps=300)
    envs, host, keys = table.envelopes, table.host, Keys(prefix)
    ends = {e.seq + e.cause["events"] - 1 for e in envs if e.cause}
    assert any(e.cause and e.cause["events"] > 1 for e in envs)  # some command has several events
    projector = Projector(settings_for("127.0.0.1:1", redis_url, prefix), games=[game])
    topic = projector.s.kafka.topic(game)
    rng = random.Random(5)
    shown, held_back, i = [], [], 0
    try:
        while i < len(envs):
            n = rng.randint(1, 6)
            batch = [_Record(topic, 0, i + j, encode_record(e)) for j, e in enumerate(envs[i:i + n])]
            projector.fold(None, batch)
            shown.append(int(redis.hget(keys.meta(table.game_id), "version") or 0))
            held_back.append(projector.commit_offsets(batch).get((topic, 0)))
            i += n
    finally:
        projector.redis.close()
    assert set(shown) - {0} <= ends, sorted(set(shown) - ends)
    assert shown[-1] == envs[-1].seq
    # Committed up to the first record of a command not yet shown, never past it.
    for k, version in enumerate(shown):
        assert held_back[k] == version, (k, version, held_back[k])
    views = {k.decode(): v.decode() for k, v in redis.hgetall(keys.views(table.game_id)).items()}
    assert views == read_model_views(host, host.fold(envs))


def test_a_consume_hands_over_what_has_come_without_waiting_for_a_full_batch(kafka, prefix, monkeypatch):
    """The projector's consume returns the records that are there, not a batch of
    max_records at the end of its wait: a quiet table's move reaches its seats' views at
    once. With the wait made 60 s, a consume that waited to fill its batch would take that."""
    from confluent_kafka import Consumer, Producer, TopicPartition

    from croupier.projector import service as projector_service
    from croupier.projector.confluent import consumer_config
    from croupier.rules.store import ensure_topic

    monkeypatch.setattr(projector_service, "IDLE_WAIT_S", 60.0)
    settings = KafkaSettings(bootstrap=kafka, partitions=1)
    topic = f"{prefix}quiet"
    ensure_topic(settings, topic)
    producer = Producer({"bootstrap.servers": kafka})
    for i in range(3):
        producer.produce(topic, f"event-{i}".encode(), b"g", 0)
    assert producer.flush(30) == 0
    consumer = Consumer(consumer_config(settings, client_id=f"{prefix}quiet"))
    consumer.assign([TopicPartition(topic, 0, 0)])
    try:
        started = time.monotonic()
        got: list[bytes] = []
        while len(got) < 3 and time.monotonic() - started < 50:
            got += [m.value() for m in projector_service.next_batch(consumer, 5000) if m.error() is None]
        assert got == [b"event-0", b"event-1", b"event-2"]
        assert time.monotonic() - started < 50, "the consume waited out its whole wait"
    finally:
        consumer.close()


def test_a_game_folded_again_while_a_rebuild_drops_the_read_models_is_listed_after_it(redis, redis_url, prefix):
    """A running projector may fold a partition again in the middle of a rebuild's drop (it
    rewinds on finding a game's keys gone). Wherever that happens among the patterns the
    rebuild drops, the epoch's fold from zero afterwards leaves every game in its listings.
    (With the game's keys dropped first, a fold just after them was listed, then lost its
    listings, and the epoch's fold found the game current and never listed it again.)"""
    from croupier.engine.selfplay import SelfplayReport, play_one
    from croupier.projector.service import Projector, drop_keys
    from croupier.rules.store import encode_record

    spec = registry.get(GAME)
    tables = [play_one(spec, seats=2, seat_bots=["random"] * 2, options=spec.parse_options({}), seed=seed,
                       index=0, report=SelfplayReport(game=GAME), check_all_legal=False, max_steps=steps)
              for seed, steps in ((21, 100_000), (22, 40))]  # one finished, one running
    keys = Keys(prefix)
    patterns = keys.read_model_patterns()
    projector = Projector(settings_for("127.0.0.1:1", redis_url, prefix), games=[GAME])
    topic = projector.s.kafka.topic(GAME)
    records = [_Record(topic, 0, i, encode_record(e)) for i, e in enumerate(e for t in tables for e in t.envelopes)]

    def fold_from_zero():
        projector.cache.clear()
        projector.held.clear()
        projector.fold(None, records)

    def listed():
        finished, running = tables[0].game_id, tables[1].game_id
        return (redis.zscore(keys.finished(GAME), finished) is not None,
                redis.zscore(keys.running(GAME), running) is not None,
                redis.zscore(keys.all_games(), f"{GAME}:{finished}") is not None,
                redis.zscore(keys.all_games(), f"{GAME}:{running}") is not None)

    try:
        fold_from_zero()
        assert listed() == (True,) * 4
        for k in range(len(patterns) + 1):
            drop_keys(redis, patterns[:k])
            fold_from_zero()  # the running projector's rewind, in the middle of the drop
            drop_keys(redis, patterns[k:])
            fold_from_zero()  # the epoch's fold from zero
            assert listed() == (True,) * 4, (k, patterns[:k])
            for t in tables:
                assert int(redis.hget(keys.meta(t.game_id), "version")) == t.envelopes[-1].seq
    finally:
        projector.redis.close()


def test_listings_left_behind_by_a_failure_between_the_two_writes_are_written_when_the_game_is_next_loaded(
        redis, redis_url, prefix, monkeypatch):
    """The guarded write of a game's state and its listings are two round trips to Redis. A
    failure between them (a timeout, a crash) left the state current and the listings behind:
    the events, delivered again, are skipped as applied, so an ended game stayed "running"
    and never reached the finished list. Now loading the stored state writes its
    listings again."""
    import redis as redis_lib

    from croupier.engine.selfplay import SelfplayReport, play_one
    from croupier.projector.service import Projector
    from croupier.rules.store import encode_record

    spec = registry.get(GAME)
    table = play_one(spec, seats=2, seat_bots=["random"] * 2, options=spec.parse_options({}), seed=31, index=0,
                     report=SelfplayReport(game=GAME), check_all_legal=False, max_steps=100_000)
    gid, keys = table.game_id, Keys(prefix)
    projector = Projector(settings_for("127.0.0.1:1", redis_url, prefix), games=[GAME])
    topic = projector.s.kafka.topic(GAME)
    envs = table.envelopes
    ends = next(i for i, e in enumerate(envs) if e.type == "TableEnded")
    start = next(i for i in range(ends, -1, -1) if envs[i].cause is not None)  # the ending command's events
    records = [_Record(topic, 0, i, encode_record(e)) for i, e in enumerate(envs)]
    try:
        projector.fold(None, records[:start])
        assert redis.zscore(keys.running(GAME), gid) is not None
        real = ReadModels._queue_listings
        failing = {"left": 1}

        def listings(self, pipe, f, message, now_ms):
            if failing["left"]:
                failing["left"] -= 1
                raise redis_lib.ConnectionError("Redis went away between the two round trips")
            return real(self, pipe, f, message, now_ms)

        monkeypatch.setattr(ReadModels, "_queue_listings", listings)
        with pytest.raises(redis_lib.ConnectionError):
            projector.fold(None, records[start:])
        assert redis.hget(keys.meta(gid), "status") == b"over"  # the state was written ...
        assert redis.zscore(keys.running(GAME), gid) is not None  # ... its listings were not
        # The projector folds again from its committed offsets (as after a Redis error, or a
        # restart): the events are skipped as applied, and the listings are written.
        projector.cache.clear()
        projector.held.clear()
        projector.fold(None, records[start:])
        assert redis.zscore(keys.running(GAME), gid) is None
        assert redis.zscore(keys.finished(GAME), gid) is not None
    finally:
        projector.redis.close()


def _finished_and_running(seed: int = 21):
    from croupier.engine.selfplay import SelfplayReport, play_one

    spec = registry.get(GAME)
    return [play_one(spec, seats=2, seat_bots=["random"] * 2, options=spec.parse_options({}), seed=s, index=0,
                     report=SelfplayReport(game=GAME), check_all_legal=False, max_steps=steps)
            for s, steps in ((seed, 100_000), (seed + 1, 40))]


def test_a_finished_game_s_read_models_expire_the_ttl_after_its_end_and_leave_the_listings(redis, prefix):
    """Redis must not grow with every game ever played: a finished game's keys expire
    finished_ttl_s after its last event (not after its projection, so a fold again from the log
    does not bring back games whose time is up), and the sweep takes expired games out of the
    finished and all-games listings."""
    import dataclasses

    finished, running = _finished_and_running()
    host = finished.host
    keys = Keys(prefix)
    ttl_s = 3600
    models = ReadModels(redis, keys, finished_ttl_s=ttl_s)
    over = host.fold(finished.envelopes)
    assert over.status == "over"
    now_ms = int(time.time() * 1000)
    ended_a_minute_ago = dataclasses.replace(over, last_time=now_ms - 60_000)
    live = host.fold(running.envelopes)
    assert models.apply([Flush(finished.game_id, GAME, 1, ended_a_minute_ago), Flush(running.game_id, GAME, 1, live)],
                        {GAME: host}) == [1, 1]
    for key in (keys.meta(finished.game_id), keys.state(finished.game_id), keys.views(finished.game_id)):
        left_ms = redis.pttl(key)
        assert (ttl_s - 60) * 1000 - 30_000 < left_ms <= (ttl_s - 60) * 1000, key
    for key in (keys.meta(running.game_id), keys.state(running.game_id), keys.views(running.game_id)):
        assert redis.pttl(key) == -1, key  # a game not over never expires
    assert redis.zscore(keys.finished(GAME), finished.game_id) is not None
    assert redis.zscore(keys.all_games(), f"{GAME}:{finished.game_id}") is not None

    # The sweep, an hour later: the finished game leaves the listings, the running one stays.
    assert models.sweep([GAME], now_ms + ttl_s * 1000) == 1
    assert redis.zscore(keys.finished(GAME), finished.game_id) is None
    assert redis.zscore(keys.all_games(), f"{GAME}:{finished.game_id}") is None
    assert redis.zscore(keys.running(GAME), running.game_id) is not None
    assert redis.zscore(keys.all_games(), f"{GAME}:{running.game_id}") is not None
    assert models.sweep([GAME], now_ms + ttl_s * 1000) == 0

    # A game that ended longer ago than the TTL, folded again (a rebuild): nothing is kept.
    old = next(t for t in _finished_and_running(seed=41) if t.envelopes[-1].type == "TableEnded")
    assert models.apply([Flush(old.game_id, GAME, 1, host.fold(old.envelopes))], {GAME: host}) == [1]
    assert not redis.exists(keys.meta(old.game_id), keys.state(old.game_id), keys.views(old.game_id))
    for listing in (keys.finished(GAME), keys.running(GAME), keys.lobby(GAME)):
        assert redis.zscore(listing, old.game_id) is None
    assert redis.zscore(keys.all_games(), f"{GAME}:{old.game_id}") is None

    # With no TTL (0), finished games stay for good and the sweep takes nothing.
    forever = ReadModels(redis, Keys(prefix + "forever."), finished_ttl_s=0)
    assert forever.apply([Flush(old.game_id, GAME, 1, host.fold(old.envelopes))], {GAME: host}) == [1]
    assert redis.pttl(Keys(prefix + "forever.").meta(old.game_id)) == -1
    assert forever.sweep([GAME], now_ms + 10**12) == 0


@pytest.mark.parametrize("damage", ["state_missing", "state_of_another_version", "state_unreadable"])
def test_a_game_whose_stored_state_is_gone_or_wrong_is_written_whole_by_its_fold_from_the_start(
        redis, redis_url, prefix, damage):
    """A meta left without its state (an eviction, a hand) refused every fold of the game for
    good: the events after it showed a gap, the partition's fold from zero did not continue the
    stored version, and the partition was rewound again and again. A fold from the game's
    first event is whole, so it is written."""
    from croupier.projector.service import Projector
    from croupier.rules.store import encode_record

    table = _finished_and_running()[1]
    keys = Keys(prefix)
    projector = Projector(settings_for("127.0.0.1:1", redis_url, prefix), games=[GAME])
    topic = projector.s.kafka.topic(GAME)
    records = [_Record(topic, 0, i, encode_record(e)) for i, e in enumerate(table.envelopes)]
    half = len(records) // 2
    try:
        projector.fold(None, records[:half])
        assert int(redis.hget(keys.meta(table.game_id), "version")) == table.envelopes[half - 1].seq
        if damage == "state_missing":
            redis.delete(keys.state(table.game_id))
        elif damage == "state_of_another_version":
            earlier = table.host.fold(table.envelopes[:3])
            redis.set(keys.state(table.game_id), pickle.dumps(earlier))
        else:
            redis.set(keys.state(table.game_id), b"not a pickle")
        # A projector that starts: the next events show a gap, so the partition is read again
        # from zero, and that fold is written.
        projector.cache.clear()
        projector.fold(None, records[half:])
        assert projector.rewound  # the gap
        projector.fold(None, records)
        assert not projector.rewound
        assert int(redis.hget(keys.meta(table.game_id), "version")) == table.envelopes[-1].seq
        stored = pickle.loads(redis.get(keys.state(table.game_id)))
        assert stored.version == table.envelopes[-1].seq
        assert {k.decode(): v.decode() for k, v in redis.hgetall(keys.views(table.game_id)).items()} == \
            read_model_views(table.host, table.host.fold(table.envelopes))
    finally:
        projector.redis.close()


def _a_finished_game_stored(redis, prefix: str):
    """A finished game written whole to Redis: (the game, its host, the keys, the models)."""
    finished = _finished_and_running()[0]
    host = finished.host
    keys = Keys(prefix)
    models = ReadModels(redis, keys)
    assert models.apply([Flush(finished.game_id, GAME, 1, host.fold(finished.envelopes))], {GAME: host}) == [1]
    return finished, host, keys, models


def test_an_older_state_applied_after_a_newer_one_leaves_the_newer_one_s_listings(redis, prefix):
    """Two projectors fold the same partition for a moment in a handover: the one that lost
    the race must not put a game that ended back among the running."""
    finished, host, keys, models = _a_finished_game_stored(redis, prefix)
    envs = finished.envelopes
    assert redis.zscore(keys.finished(GAME), finished.game_id) is not None
    older = host.fold(envs[:len(envs) // 2])
    assert older.status == "running"
    assert models.apply([Flush(finished.game_id, GAME, 1, older)], {GAME: host}) == [2]
    assert redis.zscore(keys.running(GAME), finished.game_id) is None
    assert redis.zscore(keys.finished(GAME), finished.game_id) is not None
    assert redis.hget(keys.meta(finished.game_id), "status") == b"over"


def _read_model_keys(redis, prefix: str) -> list[bytes]:
    keys = []
    for pattern in ("g:*", "lobby:*", "games:*", "projector:offsets"):
        keys.extend(redis.scan_iter(match=f"{prefix}{pattern}"))
    return keys


def _lose_the_tail(redis, prefix: str, saved: dict[bytes, tuple[bytes, int]]) -> None:
    """Redis as it comes back without its last writes: the read models and the projectors'
    record of offsets as they were when `saved` was taken."""
    for key in _read_model_keys(redis, prefix):
        redis.delete(key)
    redis.delete(f"{prefix}projector:lag")
    for key, (dumped, pttl) in saved.items():
        redis.restore(key, max(pttl, 0), dumped)


def _save(redis, prefix: str) -> dict[bytes, tuple[bytes, int]]:
    return {key: (redis.dump(key), redis.pttl(key)) for key in _read_model_keys(redis, prefix)}


def _assert_projected(redis, kafka: str, prefix: str, ids: list[str]) -> None:
    keys = Keys(prefix)
    now = snapshot(redis, prefix)
    expected = expected_views(kafka, prefix)
    assert set(ids) <= set(expected)
    for game_id, want in expected.items():
        assert now.get(keys.views(game_id)) == want["views"], game_id
        assert now[keys.meta(game_id)]["version"] == want["version"]


def test_a_projector_started_on_a_redis_that_lost_its_last_writes_folds_them_again(
        kafka, redis_url, redis, prefix, services, tmp_path):
    """Redis acknowledges a write before its append-only file reaches the disk (everysec), so a
    node lost in between comes back without its last second, while the projector's offsets in
    Kafka are already past it. The projector starts from its record of offsets in Redis, which
    was lost with those writes, so it folds them again."""
    addr, projector = _rules_and_projector(kafka, redis_url, prefix, tmp_path, services)
    first = drive(addr, 3, 15, 50)
    wait_caught_up(redis_url, prefix, [projector])
    saved = _save(redis, prefix)
    assert redis.hlen(f"{prefix}projector:offsets") > 0
    second = drive(addr, 3, 15, 60)
    wait_caught_up(redis_url, prefix, [projector])
    projector.kill()
    _lose_the_tail(redis, prefix, saved)
    assert not redis.exists(Keys(prefix).meta(second[0]))

    projector = start_projector(kafka, redis_url, prefix, tmp_path)
    services.append(projector)
    wait_caught_up(redis_url, prefix, [projector])
    _assert_projected(redis, kafka, prefix, first + second)


def _played_then_tail_lost(addr: str, redis_url: str, redis, prefix: str, seeds: tuple[int, int]):
    """Two batches of games played and folded, then Redis back without the second batch's
    writes (its last second, as after a crash): (the first batch's ids, the second's)."""
    first = drive(addr, 3, 15, seeds[0])
    wait_caught_up(redis_url, prefix)
    saved = _save(redis, prefix)
    second = drive(addr, 3, 15, seeds[1])
    wait_caught_up(redis_url, prefix)
    _lose_the_tail(redis, prefix, saved)
    return first, second


@contextlib.contextmanager
def _projector_in_a_thread(kafka: str, redis_url: str, prefix: str, tmp_path, services, *, check_redis: bool = True,
                           stall_s: int = 30):
    """A rules replica of GAME, and a projector running in this process (so a test can reach
    into it): yields (the replica's address, the projector)."""
    import dataclasses
    import threading

    from croupier.projector.service import Projector

    rules, addr = start_rules(GAME, kafka, redis_url, prefix, tmp_path)
    services.append(rules)
    wait_owned(redis_url, prefix, GAME, PARTITIONS, services=[rules])
    settings = dataclasses.replace(settings_for(kafka, redis_url, prefix), stall_s=stall_s)
    projector = Projector(settings, games=[GAME])
    projector.connect()
    if not check_redis:
        projector._check_redis = lambda consumer: False
    thread = threading.Thread(target=projector.run, daemon=True)
    thread.start()
    try:
        yield addr, projector
    finally:
        projector.stop()
        thread.join(timeout=10)
        projector.redis.close()


def _restarts(projector) -> float:
    return sum(sample.value for metric in projector.metrics.collect() for sample in metric.samples
               if sample.name == "croupier_projector_consumer_restarts_total")


def test_a_partition_that_stands_still_behind_the_log_gets_a_new_consumer(kafka, redis_url, redis, prefix, services,
                                                                         tmp_path):
    """librdkafka can leave an assigned partition unfetched for good, with no error (after a
    broker restart; librdkafka #5586): its games were never folded again, and tests/faults once
    failed on it. A partition that stands still while the broker holds records past it makes
    the projector leave the group and join again with a new consumer. Played here by pausing
    the partitions, which stops their fetch the same way. Partitions that are idle, with
    nothing past them, never do."""
    with _projector_in_a_thread(kafka, redis_url, prefix, tmp_path, services, stall_s=2) as (addr, projector):
        first = drive(addr, 2, 6, 150)
        _wait_for_metas(redis, prefix, first)
        wait_caught_up(redis_url, prefix)
        time.sleep(6)  # idle, every partition asked about at least twice
        assert _restarts(projector) == 0
        stuck = projector.consumer
        stuck.pause(stuck.assignment())
        second = drive(addr, 3, 6, 160)
        _wait_for_metas(redis, prefix, second, timeout_s=60)
        assert _restarts(projector) >= 1 and projector.consumer is not stuck
        wait_caught_up(redis_url, prefix)
        _assert_projected(redis, kafka, prefix, first + second)
        restarts = _restarts(projector)
        time.sleep(6)  # idle again: the new consumer is left alone
        assert _restarts(projector) == restarts


def _wait_for_metas(redis, prefix: str, game_ids: list[str], timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while not all(redis.exists(Keys(prefix).meta(g)) for g in game_ids) and time.monotonic() < deadline:
        time.sleep(0.2)


def test_a_running_projector_folds_again_what_a_restarted_redis_lost(kafka, redis_url, redis, prefix, services,
                                                                   tmp_path):
    """The same loss under a running projector: redis-py reconnects by itself, so the
    projector knows the Redis it writes to by its run_id, and one it has not seen before is
    folded into again from that Redis's record of offsets. (One Redis serves every test here,
    so its restart is played by the projector having known another run_id.)"""
    with _projector_in_a_thread(kafka, redis_url, prefix, tmp_path, services) as (addr, projector):
        first, second = _played_then_tail_lost(addr, redis_url, redis, prefix, seeds=(70, 80))
        projector.redis_run_id = "the run_id of the Redis before its restart"
        _wait_for_metas(redis, prefix, second)
        wait_caught_up(redis_url, prefix)
        _assert_projected(redis, kafka, prefix, first + second)


def test_a_projector_whose_redis_lost_its_last_writes_does_not_commit_past_them(kafka, redis_url, redis, prefix,
                                                                                services, tmp_path):
    """Before the projector sees the new Redis (its run_id is checked once a second), it may
    fold a batch of other games and record offsets past the lost writes. Its record is written
    only over the values it knows Redis holds: the moved record stops the commit, and the
    partitions are folded again from where Redis's record says."""
    # (The restart detection off: this test is about the record alone.)
    with _projector_in_a_thread(kafka, redis_url, prefix, tmp_path, services, check_redis=False) as (addr, _):
        first, second = _played_then_tail_lost(addr, redis_url, redis, prefix, seeds=(90, 100))
        # Other games, on the partitions whose last writes were lost: their batches commit
        # there, over a record that moved (games of other partitions alone would not show it).
        from croupier.rules.store import partition_for

        third = drive(addr, 4, 10, 110, partitions={partition_for(g, PARTITIONS) for g in second})
        _wait_for_metas(redis, prefix, second + third)
        wait_caught_up(redis_url, prefix)
        _assert_projected(redis, kafka, prefix, first + second + third)


def test_writes_lost_on_partitions_with_no_new_events_are_folded_again(kafka, redis_url, redis, prefix, services,
                                                                         tmp_path):
    """The same loss with no restart seen and no new event after it: no commit comes to find
    the record moved. Before, those games stayed lost until a rebuild; now the projector
    checks its record once a second and folds again what it covered."""
    with _projector_in_a_thread(kafka, redis_url, prefix, tmp_path, services, check_redis=False) as (addr, _):
        first, second = _played_then_tail_lost(addr, redis_url, redis, prefix, seeds=(120, 130))
        assert not any(redis.exists(Keys(prefix).meta(g)) for g in second)
        _wait_for_metas(redis, prefix, second, timeout_s=30)
        wait_caught_up(redis_url, prefix)
        _assert_projected(redis, kafka, prefix, first + second)


def test_a_record_dropped_by_a_rebuild_is_not_taken_for_a_loss(kafka, redis_url, redis, prefix, services, tmp_path):
    """A rebuild drops the record of offsets first, then the read models (which may take
    minutes), then bumps its epoch. Marked as rebuilding meanwhile, the projectors do not take
    the missing record for a loss (folding from zero into keys being dropped, only to do so
    again at the epoch); without the mark, they do."""
    with _projector_in_a_thread(kafka, redis_url, prefix, tmp_path, services, check_redis=False) as (addr, projector):
        drive(addr, 2, 10, 140)
        wait_caught_up(redis_url, prefix)
        folds = []
        fold_again = projector._fold_again
        projector._fold_again = lambda consumer: (folds.append(time.monotonic()), fold_again(consumer))[1]
        keys = Keys(prefix)
        redis.set(keys.rebuilding(), "1", ex=60)
        redis.delete(keys.offsets())
        time.sleep(3.5)
        during = len(folds)
        redis.delete(keys.rebuilding())
        deadline = time.monotonic() + 30
        while not folds and time.monotonic() < deadline:
            time.sleep(0.2)
    assert during == 0
    assert folds, "the record's loss was never folded again once no rebuild was marked"


def test_a_fold_from_the_start_never_rolls_back_a_newer_stored_version(redis, prefix):
    """A projector behind another (a handover, a fold again from zero) that finds the game's
    state gone (dropped by a load, or by a rebuild's scan) must not write its older fold over
    the newer meta: the heal is for a fold that reaches the stored version."""
    finished, host, keys, models = _a_finished_game_stored(redis, prefix)
    envs = finished.envelopes
    redis.delete(keys.state(finished.game_id))
    older = host.fold(envs[:len(envs) // 2])
    # 3: nothing written; the projector goes on with that fold from the first event (Flush.whole).
    assert models.apply([Flush(finished.game_id, GAME, 1, older)], {GAME: host}) == [3]
    assert redis.hget(keys.meta(finished.game_id), "status") == b"over"
    assert int(redis.hget(keys.meta(finished.game_id), "version")) == envs[-1].seq
    assert redis.zscore(keys.running(GAME), finished.game_id) is None


def test_the_sweep_frees_finished_games_an_earlier_version_kept_for_good(redis, prefix):
    """Finished games written with no expiry (TTL 0, as shipped before) are taken out of the
    listings by the sweep once their time is up, and their keys go with them: hidden but kept,
    they would fill Redis for good."""
    finished = _finished_and_running()[0]
    host = finished.host
    keys = Keys(prefix)
    ReadModels(redis, keys, finished_ttl_s=0).apply([Flush(finished.game_id, GAME, 1, host.fold(finished.envelopes))],
                                                    {GAME: host})
    assert redis.pttl(keys.meta(finished.game_id)) == -1
    assert ReadModels(redis, keys, finished_ttl_s=3600).sweep([GAME], int(time.time() * 1000)) == 1
    assert not redis.exists(keys.meta(finished.game_id), keys.state(finished.game_id), keys.views(finished.game_id))
    assert redis.zscore(keys.finished(GAME), finished.game_id) is None
