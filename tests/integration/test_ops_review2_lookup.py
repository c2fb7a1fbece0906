"""export, audit and replay of a GAME_ID without --game read the topic of the type the id
names (`<game_type>-...`, as the gateway's and fork's ids are) first. They read the game
types in a fixed order, expeditions first: a nightfall game's audit read four other topics'
partitions to their end before its own, and one record under its id in one of them (written
from outside the rules) was taken for the game's whole log: a finished game audited
"INCOMPLETE, clean so far" from that record, exit 0."""

from __future__ import annotations

import json
import uuid

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic
from harness import croupier, played_as, service_env

from croupier.engine import registry
from croupier.rules.store import encode_record, partition_for


@pytest.fixture
def prefix(redis):
    value = f"l{uuid.uuid4().hex[:10]}."
    yield value
    keys = list(redis.scan_iter(match=f"{value}*"))
    if keys:
        redis.delete(*keys)


def test_a_game_is_read_from_the_topic_its_id_names(kafka, redis_url, prefix):
    env = service_env(kafka, redis_url, prefix)
    admin = AdminClient({"bootstrap.servers": kafka})
    topics = {g: f"{prefix}croupier.events.{g}" for g in registry.GAME_IDS}
    for future in admin.create_topics([NewTopic(t, num_partitions=2, replication_factor=1)
                                       for t in topics.values()]).values():
        future.result(30)
    gid = f"nightfall-{uuid.uuid4().hex[:16]}"
    game = played_as(gid, "nightfall")
    assert game[-1].type == "TableEnded"
    producer = Producer({"bootstrap.servers": kafka})
    part = partition_for(gid, 2)
    for e in game:
        producer.produce(topics["nightfall"], encode_record(e), key=gid.encode(), partition=part)
    # One record under the game's id in another game type's topic, from outside the rules.
    producer.produce(topics["expeditions"], encode_record(game[0]), key=gid.encode(), partition=part)
    producer.flush(30)

    r = croupier(env, "audit", gid, "--json", timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    report = json.loads(r.stdout)
    assert report["ended"] is True and report["events"] == len(game) and report["game_type"] == "nightfall"
    r = croupier(env, "export", gid, timeout=120)
    assert r.returncode == 0 and len(r.stdout.splitlines()) == len(game), r.stderr


def test_a_forks_audit_checks_the_origin_it_carries_against_the_origins_log(kafka, redis_url, prefix):
    """The fork's own log holds by itself whatever game it carries as its origin: a fork made
    from a game never played, under a real game's id, audited clean. `croupier audit FORK`
    reads the origin's log too and names the fork's first seq (`origin`) when they differ."""
    from croupier.engine.table import TableHost

    env = service_env(kafka, redis_url, prefix)
    topic = f"{prefix}croupier.events.expeditions"
    admin = AdminClient({"bootstrap.servers": kafka})
    for future in admin.create_topics([NewTopic(topic, num_partitions=2, replication_factor=1)]).values():
        future.result(30)
    origin_id = f"expeditions-{uuid.uuid4().hex[:16]}"
    real = played_as(origin_id, "expeditions")
    made_up = played_as(origin_id, "expeditions", seed=10)
    host = TableHost(registry.get("expeditions"))

    def fork(origin, fork_id):
        at = len(origin) // 2
        while origin[at].cause is None:
            at += 1
        return host.fork(fork_id, origin[:at], "ef" * 32, now=origin[at - 1].time)

    genuine = fork(real, f"expeditions-{uuid.uuid4().hex[:16]}")
    forged = fork(made_up, f"expeditions-{uuid.uuid4().hex[:16]}")
    producer = Producer({"bootstrap.servers": kafka})
    for game in (real, genuine, forged):
        gid = game[0].game_id
        for e in game:
            producer.produce(topic, encode_record(e), key=gid.encode(), partition=partition_for(gid, 2))
    producer.flush(30)

    r = croupier(env, "audit", genuine[0].game_id, "--json", timeout=120)
    assert r.returncode == 0 and json.loads(r.stdout)["ok"] is True, r.stdout + r.stderr
    r = croupier(env, "audit", forged[0].game_id, "--json", timeout=120)
    assert r.returncode == 1, r.stdout + r.stderr
    fault = json.loads(r.stdout)["first_fault"]
    assert fault["check"] == "origin" and fault["seq"] == 1 and origin_id in fault["what"]


def test_a_game_of_another_type_in_a_topic_is_not_audited_clean(kafka, redis_url, prefix):
    """A whole journey game written into the expeditions topic under an expeditions id (from
    outside the rules): it re-ran clean as the journey game it says it is, exit 0, though the
    projector passes over every record of it (wrong_game_type) and no journey replica reads
    that topic. The audit names the first such record (`topic`) and exits 1."""
    env = service_env(kafka, redis_url, prefix)
    topic = f"{prefix}croupier.events.expeditions"
    admin = AdminClient({"bootstrap.servers": kafka})
    for future in admin.create_topics([NewTopic(topic, num_partitions=2, replication_factor=1)]).values():
        future.result(30)
    gid = f"expeditions-{uuid.uuid4().hex[:16]}"
    game = played_as(gid, "journey")
    producer = Producer({"bootstrap.servers": kafka})
    for e in game:
        producer.produce(topic, encode_record(e), key=gid.encode(), partition=partition_for(gid, 2))
    producer.flush(30)
    r = croupier(env, "audit", gid, "--json", timeout=120)
    assert r.returncode == 1, r.stdout + r.stderr
    fault = json.loads(r.stdout)["first_fault"]
    assert fault["check"] == "topic" and fault["seq"] == 1 and "journey" in fault["what"] and topic in fault["what"]
