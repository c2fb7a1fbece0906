"""The projector against unusual and hostile records in the log, and odd Redis states, with a
real Kafka and Redis: one bad record never stops the projector nor stalls the other games of
its partition; it is logged (game, partition, offset, why) and counted; nothing that is not
in a game's log (as replay and audit read it: its partition, its key) reaches its views."""

from __future__ import annotations

import dataclasses
import os
import threading
import time

import pytest
from harness import read_model_views

from croupier.engine import registry
from croupier.engine.selfplay import SelfplayReport, play_one
from croupier.engine.table import ForceEnd, TableHost
from croupier.projector.keys import Keys
from croupier.projector.service import Projector
from croupier.rules.store import encode_record, ensure_topic

GAME = "expeditions"
PARTITIONS = 1  # one partition: every game of the test shares it with the poison records


def _settings(kafka: str, redis_url: str, prefix: str):
    from croupier.projector.service import ProjectorSettings
    from croupier.rules.settings import KafkaSettings

    return ProjectorSettings(redis_url=redis_url, key_prefix=prefix, finished_ttl_s=0, metrics_port=0, max_records=5000,
                             kafka=KafkaSettings(bootstrap=kafka, topic_prefix=prefix, partitions=PARTITIONS))


class _Log:
    """Stands in for the projector's structlog logger: keeps every line."""

    def __init__(self):
        self.lines: list[tuple[str, str, dict]] = []

    def _add(self, level):
        return lambda event, **kw: self.lines.append((level, event, kw))

    def __getattr__(self, level):
        return self._add(level)


def _game(index: int, commands: int):
    """A played game of GAME cut after its first `commands` commands: (its envelopes, host)."""
    spec = registry.get(GAME)
    table = play_one(spec, seats=2, seat_bots=["random"] * 2, options=spec.parse_options({}), seed=31, index=index,
                     report=SelfplayReport(game=GAME), check_all_legal=False, max_steps=400)
    envs = table.envelopes
    starts = [i for i, e in enumerate(envs) if e.cause is not None]
    assert len(starts) > commands + 2, "the game is too short for the test"
    return envs[:starts[commands]], envs[starts[commands]:], table.host


def _forged_end(host: TableHost, envs):
    """The events of an operator's ForceEnd after `envs`: a TableEnded, which shows the seed."""
    return host.decide(host.fold(envs), ForceEnd(reason="forged"), command_id="forged", now=envs[-1].time + 1)


class _Running:
    def __init__(self, projector: Projector):
        self.projector = projector
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        try:
            self.projector.run()
        except BaseException as exc:  # the test reports it
            self.error = exc
            raise


def _wait(predicate, timeout_s: float) -> bool:
    """Until predicate() holds (True) or timeout_s passes (its last answer)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return predicate()


@pytest.fixture
def projector_log(monkeypatch):
    from croupier.projector import models, service

    recorded = _Log()
    monkeypatch.setattr(service, "log", recorded)
    monkeypatch.setattr(models, "log", recorded)
    return recorded


def _start(kafka, redis_url, prefix) -> _Running:
    projector = Projector(_settings(kafka, redis_url, prefix), games=[GAME])
    projector.connect()
    running = _Running(projector)
    running.thread.start()
    return running


def _stop(running: _Running) -> None:
    running.projector.stop()
    running.thread.join(timeout=15)
    running.projector.redis.close()


def _views(redis, keys: Keys, game_id: str) -> dict[str, str]:
    if redis.type(keys.views(game_id)) != b"hash":
        return {}
    return {k.decode(): v.decode() for k, v in redis.hgetall(keys.views(game_id)).items()}


def _version(redis, keys: Keys, game_id: str) -> str:
    if redis.type(keys.meta(game_id)) != b"hash":
        return ""
    return (redis.hget(keys.meta(game_id), "version") or b"").decode()


def _skipped(projector: Projector, reason: str) -> float:
    total = 0.0
    for metric in projector.metrics.collect():
        for sample in metric.samples:
            if sample.name == "croupier_projector_skipped_records_total" and sample.labels.get("reason") == reason:
                total += sample.value
    return total


def test_hostile_records_are_skipped_and_the_other_games_of_the_partition_go_on(
        kafka, redis_url, redis, prefix, projector_log):
    from confluent_kafka import Producer

    settings = _settings(kafka, redis_url, prefix)
    topic = settings.kafka.topic(GAME)
    ensure_topic(settings.kafka, topic)
    keys = Keys(prefix)
    producer = Producer({"bootstrap.servers": kafka, "enable.idempotence": True, "message.max.bytes": 2_000_000})
    offsets: list[tuple[str, int]] = []  # what each poison record is, in order

    def put(value, key, what: str | None = None):
        producer.produce(topic, value, key, 0)  # every record in partition 0: one partition's games
        assert producer.flush(30) == 0
        if what:
            offsets.append((what, 0))

    def put_envs(envs, key=None):
        for e in envs:
            put(encode_record(e), (key if key is not None else e.game_id).encode())

    host = TableHost(registry.get(GAME))
    good, rest_of_good, _ = _game(0, 6)          # a game that goes on around every poison record
    victim, victim_rest, _ = _game(1, 5)         # forged ends of it under the wrong key
    other, other_rest, _ = _game(2, 5)           # a forged end of it under the victim's key
    unknown, unknown_rest, _ = _game(3, 5)       # an event of an unknown type
    newer, newer_rest, _ = _game(4, 5)           # an event of a newer version
    gapped, gapped_rest, _ = _game(5, 5)         # a command missing from the log
    headless, headless_rest, _ = _game(6, 1)     # no TableCreated, it starts at seq 5
    twice, twice_rest, _ = _game(7, 5)           # one record delivered twice
    aborted, aborted_rest, _ = _game(8, 5)       # a forged end in an aborted transaction
    stringy, stringy_rest, _ = _game(9, 5)       # an envelope whose seq is text
    conflict, conflict_rest, _ = _game(10, 5)    # another event at a seq already folded
    journey_spec = registry.get("journey")
    journey = play_one(journey_spec, seats=2, seat_bots=["random"] * 2, options=journey_spec.parse_options({}), seed=3,
                       index=0, report=SelfplayReport(game="journey"), check_all_legal=False, max_steps=50).envelopes

    for envs in (good, victim, other, unknown, newer, gapped, twice, aborted, stringy, conflict):
        put_envs(envs)
    expected: dict[str, list] = {g[0].game_id: list(g) for g in (good, victim, other, unknown, newer, gapped, twice,
                                                                  aborted, stringy, conflict)}
    # Records that are not envelopes.
    put(os.urandom(300), b"junk", "random bytes")
    put(b'{"hello": "world"}', b"junk", "json of the wrong shape")
    put(b"[1, 2, 3]", b"junk", "a json list")
    put(b"null", b"junk", "json null")
    put(b"", b"junk", "an empty value")
    put(None, b"junk", "a null value")
    put(b"x" * 900_000, b"junk", "a very large record")
    # Envelopes of a game under another key, or none: not in that game's log.
    forged = _forged_end(host, victim)
    put(encode_record(forged[0]), None, "a null key")
    put(encode_record(forged[0]), b"someone-else", "a key that is not the game_id")
    forged_other = _forged_end(host, other)
    put(encode_record(forged_other[0]), victim[0].game_id.encode(), "another game's id as key")
    put_envs(victim_rest[:3])
    expected[victim[0].game_id] += victim_rest[:3]
    put_envs(other_rest[:3])
    expected[other[0].game_id] += other_rest[:3]
    # A game of another type in this game type's topic.
    put_envs(journey[:3])
    # An event this projector cannot fold: an unknown type; a newer version.
    bogus = dataclasses.replace(unknown_rest[0], type="BogusEvent")
    put(encode_record(bogus), bogus.game_id.encode(), "an unknown event type")
    put_envs(unknown_rest[1:4])  # after it: skipped, the game stays as it was
    newer_env = dataclasses.replace(newer_rest[0], version=99)
    put(encode_record(newer_env), newer_env.game_id.encode(), "a newer version")
    put_envs(newer_rest[1:4])
    # A command missing (a gap); a game whose TableCreated is not in the log.
    first_cmd_len = gapped_rest[0].cause["events"]
    put_envs(gapped_rest[first_cmd_len:first_cmd_len + 4])
    put_envs(headless_rest[:6])
    # A record twice.
    put_envs(twice_rest[:1] + twice_rest[:1] + twice_rest[1:3])
    expected[twice[0].game_id] += twice_rest[:3]
    # Another event at the last seq folded (a forged end in its place), then the real rest.
    clash = _forged_end(host, conflict[:-1])[0]
    assert clash.seq == conflict[-1].seq and clash.hash != conflict[-1].hash
    put(encode_record(clash), clash.game_id.encode(), "another event at a seq already folded")
    put_envs(conflict_rest[:3])
    expected[conflict[0].game_id] += conflict_rest[:3]
    # An envelope with a seq of text, then the real one.
    wrong = dataclasses.replace(stringy_rest[0], seq=str(stringy_rest[0].seq))
    put(encode_record(wrong), wrong.game_id.encode(), "a seq that is text")
    put_envs(stringy_rest[:2])
    expected[stringy[0].game_id] += stringy_rest[:2]
    # A forged end in a transaction its producer aborted, then the real events.
    from confluent_kafka import Producer as TxProducer

    tx = TxProducer({"bootstrap.servers": kafka, "transactional.id": f"{prefix}aborter"})
    tx.init_transactions(30)
    tx.begin_transaction()
    forged_aborted = _forged_end(host, aborted)
    tx.produce(topic, encode_record(forged_aborted[0]), aborted[0].game_id.encode(), 0)
    tx.flush(30)
    tx.abort_transaction(30)
    put_envs(aborted_rest[:3])
    expected[aborted[0].game_id] += aborted_rest[:3]
    put_envs(rest_of_good[:5])
    expected[good[0].game_id] += rest_of_good[:5]
    # Expected: each game cut at its last whole command (the fold shows only whole commands).
    want = {}
    for gid, envs in expected.items():
        state = host.fold(envs)
        want[gid] = (read_model_views(host, state), str(state.version))
    from confluent_kafka import Consumer, TopicPartition

    probe = Consumer({"bootstrap.servers": kafka, "group.id": f"{prefix}probe", "isolation.level": "read_committed"})
    _, high = probe.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
    probe.close()

    running = _start(kafka, redis_url, prefix)
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and running.thread.is_alive():
            got = {gid: (_views(redis, keys, gid), _version(redis, keys, gid))
                   for gid in want}
            record = redis.hget(keys.offsets(), f"{topic}/0")
            if got == want and record is not None and int(record) >= high - 1:
                break  # past every record (the last may be a commit marker)
            time.sleep(0.5)
        assert running.error is None, repr(running.error)
        assert running.thread.is_alive(), "the projector stopped"
        got = {gid: (_views(redis, keys, gid), _version(redis, keys, gid)) for gid in want}
        for gid in want:
            assert got[gid] == want[gid], gid
        # Nothing of the game without its TableCreated, nor of the journey game in this topic.
        assert not redis.exists(keys.meta(headless[0].game_id))
        assert not redis.exists(keys.meta(journey[0].game_id))
        # The whole partition was committed: nothing holds it back.
        assert int(redis.hget(keys.offsets(), f"{topic}/0")) >= high - 1
        p = running.projector
        assert _skipped(p, "not_an_envelope") >= 8
        assert _skipped(p, "key_mismatch") >= 3
        assert _skipped(p, "wrong_game_type") >= 3
        assert _skipped(p, "unfoldable") >= 2
        assert _skipped(p, "log_gap") >= 2
        assert _skipped(p, "game_stuck") >= 6
        assert _skipped(p, "seq_conflict") >= 1
        # Each one logged with its partition and offset, and why.
        errors = [kw for level, _event, kw in projector_log.lines if level == "error"]
        assert errors and all("partition" in kw and "offset" in kw and "why" in kw for kw in errors), errors
        stuck = {kw.get("game_id") for kw in errors}
        assert {unknown[0].game_id, newer[0].game_id, gapped[0].game_id, headless[0].game_id} <= stuck
        # A gap in the log itself is rewound for once, not for ever.
        rewinds = [kw for level, event, kw in projector_log.lines if event == "rewound"]
        assert len(rewinds) <= 3, rewinds
    finally:
        _stop(running)


def test_read_models_of_the_wrong_type_under_a_running_projector_are_made_again_from_the_log(
        kafka, redis_url, redis, prefix, projector_log):
    """A game's meta or state, a listing, or the record of offsets replaced by a value of
    another type (or an entry that is no offset) under a running projector: Redis refuses
    every write or read of it (WRONGTYPE), which the projector took for Redis being away, and
    folded again for ever, every game stalled. Now the key is dropped and made again."""
    from confluent_kafka import Consumer, Producer, TopicPartition

    settings = _settings(kafka, redis_url, prefix)
    topic = settings.kafka.topic(GAME)
    ensure_topic(settings.kafka, topic)
    keys = Keys(prefix)
    producer = Producer({"bootstrap.servers": kafka, "enable.idempotence": True})
    host = TableHost(registry.get(GAME))

    def put_envs(envs):
        for e in envs:
            producer.produce(topic, encode_record(e), e.game_id.encode(), 0)
        assert producer.flush(30) == 0

    games = {name: _game(10 + i, 3) for i, name in enumerate(("a", "b", "c", "d"))}
    lobby_game, _, _ = _game(20, 1)  # TableCreated only: in the lobby
    expected = {name: list(envs) for name, (envs, _, _) in games.items()}
    for name in ("a", "b", "c"):
        put_envs(expected[name])
    put_envs(lobby_game)

    def converge(names, timeout_s=60):
        want = {}
        for name in names:
            state = host.fold(expected[name])
            want[expected[name][0].game_id] = (read_model_views(host, state), str(state.version))
        deadline = time.monotonic() + timeout_s
        while True:
            got = {gid: (_views(redis, keys, gid), _version(redis, keys, gid))
                   for gid in want}
            lobby = [m.decode() for m in redis.zrange(keys.lobby(GAME), 0, -1)] if redis.type(
                keys.lobby(GAME)) == b"zset" else []
            running = {m.decode() for m in redis.zrange(keys.running(GAME), 0, -1)} if redis.type(
                keys.running(GAME)) == b"zset" else set()
            if got == want and lobby == [lobby_game[0].game_id] and set(want) <= running:
                return
            assert running_projector.error is None, repr(running_projector.error)
            assert time.monotonic() < deadline, (
                [gid for gid in want if got[gid] != want[gid]], lobby, running, projector_log.lines[-5:])
            time.sleep(0.3)

    def more(name, n=4):
        envs, rest, _ = games[name]
        done = len(expected[name]) - len(envs)
        step = rest[done:done + n]
        put_envs(step)
        expected[name] += step

    running_projector = _start(kafka, redis_url, prefix)
    try:
        converge(("a", "b", "c"))
        # A meta and a state of another type, and listings that are strings.
        redis.delete(keys.meta(expected["a"][0].game_id))
        redis.set(keys.meta(expected["a"][0].game_id), "junk")
        redis.delete(keys.state(expected["b"][0].game_id))
        redis.rpush(keys.state(expected["b"][0].game_id), "junk")
        redis.delete(keys.running(GAME), keys.lobby(GAME))
        redis.set(keys.running(GAME), "junk")
        redis.set(keys.lobby(GAME), "junk")
        running_projector.projector.cache.pop(expected["b"][0].game_id, None)  # as after a restart: loaded
        more("a")
        more("b")
        put_envs(expected["d"])
        converge(("a", "b", "c", "d"))
        # The record of offsets a string; then an entry that is no offset.
        redis.delete(keys.offsets())
        redis.set(keys.offsets(), "junk")
        more("c")
        converge(("a", "b", "c", "d"))
        redis.hset(keys.offsets(), mapping={f"{topic}/0": "not a number", "junk": "1"})
        more("d")
        more("a")
        converge(("a", "b", "c", "d"))
        probe = Consumer({"bootstrap.servers": kafka, "group.id": f"{prefix}probe", "isolation.level": "read_committed"})
        _, high = probe.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
        probe.close()
        deadline = time.monotonic() + 30
        while int(redis.hget(keys.offsets(), f"{topic}/0") or -1) < high and time.monotonic() < deadline:
            time.sleep(0.3)
        assert int(redis.hget(keys.offsets(), f"{topic}/0")) == high
        assert running_projector.thread.is_alive()
        assert any(event == "read_model_wrong_type" for _level, event, _kw in projector_log.lines)
    finally:
        _stop(running_projector)


def test_a_game_s_records_in_another_partition_than_its_id_hashes_to_are_skipped(
        kafka, redis_url, redis, prefix, projector_log):
    """Replay and audit read a game from the partition its id hashes to (store.read_game): a
    game written to another partition is in no log they read, and is not shown."""
    from confluent_kafka import Producer

    from croupier.projector.service import ProjectorSettings
    from croupier.rules.settings import KafkaSettings
    from croupier.rules.store import partition_for

    settings = ProjectorSettings(redis_url=redis_url, key_prefix=prefix, finished_ttl_s=0, metrics_port=0,
                                 max_records=5000, kafka=KafkaSettings(bootstrap=kafka, topic_prefix=prefix, partitions=2))
    topic = settings.kafka.topic(GAME)
    ensure_topic(settings.kafka, topic)
    keys = Keys(prefix)
    host = TableHost(registry.get(GAME))
    placed, _, _ = _game(30, 3)
    misplaced, _, _ = _game(31, 3)
    producer = Producer({"bootstrap.servers": kafka})
    for envs, wrong in ((misplaced, True), (placed, False)):
        p = partition_for(envs[0].game_id, 2)
        for e in envs:
            producer.produce(topic, encode_record(e), e.game_id.encode(), 1 - p if wrong else p)
    assert producer.flush(30) == 0
    projector = Projector(settings, games=[GAME])
    projector.connect()
    running = _Running(projector)
    running.thread.start()
    try:
        want = read_model_views(host, host.fold(placed))
        deadline = time.monotonic() + 60
        while _views(redis, keys, placed[0].game_id) != want and time.monotonic() < deadline:
            time.sleep(0.3)
        assert _views(redis, keys, placed[0].game_id) == want
        deadline = time.monotonic() + 30
        while _skipped(projector, "wrong_partition") < len(misplaced) and time.monotonic() < deadline:
            time.sleep(0.3)
        assert _skipped(projector, "wrong_partition") == len(misplaced)
        assert not redis.exists(keys.meta(misplaced[0].game_id))
    finally:
        _stop(running)


def test_a_gap_far_into_a_large_partition_sticks_its_game_after_one_rewind(kafka, redis_url, redis, prefix,
                                                                          projector_log):
    """A gap makes the projector read its partition again from the start, once; met again at
    the same offset, the game is stuck (log_gap). When the read from the start took more than
    one batch, its first commit took Redis's record of offsets (which the rewind had dropped
    from what it knew) for a record that moved, folded again from it, which undid the rewind
    and forgot the gap: gap, rewind, offsets_record_moved, about once a second, for ever, and
    the partition never committed again."""
    from confluent_kafka import Producer

    settings = dataclasses.replace(_settings(kafka, redis_url, prefix), max_records=100)
    topic = settings.kafka.topic(GAME)
    ensure_topic(settings.kafka, topic)
    keys = Keys(prefix)
    host = TableHost(registry.get(GAME))
    games = [_game(40 + i, 20) for i in range(8)]
    producer = Producer({"bootstrap.servers": kafka})
    for envs, rest, _ in games:
        for e in envs + rest:
            producer.produce(topic, encode_record(e), e.game_id.encode(), 0)
    victim = games[-1][0] + games[-1][1]
    ahead = dataclasses.replace(victim[-1], seq=victim[-1].seq + 5, hash="ab" * 32)
    producer.produce(topic, encode_record(ahead), ahead.game_id.encode(), 0)
    assert producer.flush(30) == 0
    records = sum(len(envs) + len(rest) for envs, rest, _ in games) + 1
    assert records > 3 * settings.max_records, records

    running = _Running(Projector(settings, games=[GAME]))
    running.projector.connect()
    running.thread.start()
    try:
        p = running.projector
        deadline = time.monotonic() + 90
        while _skipped(p, "log_gap") < 1 and time.monotonic() < deadline and running.thread.is_alive():
            time.sleep(0.3)
        assert _skipped(p, "log_gap") == 1, _skipped(p, "log_gap")
        moved = [kw for _level, event, kw in projector_log.lines if event == "offsets_record_moved"]
        rewinds = [kw for _level, event, kw in projector_log.lines if event == "rewound"]
        assert not moved, moved[:3]
        assert len(rewinds) == 1, rewinds
        # The whole partition is committed, and every game shows its log.
        deadline = time.monotonic() + 30
        while int(redis.hget(keys.offsets(), f"{topic}/0") or 0) < records and time.monotonic() < deadline:
            time.sleep(0.3)
        assert int(redis.hget(keys.offsets(), f"{topic}/0") or 0) >= records
        for envs, rest, _ in games:
            state = host.fold(envs + rest)
            assert _version(redis, keys, state.game_id) == str(state.version)
    finally:
        _stop(running)
