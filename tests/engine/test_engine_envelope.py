"""The hash chain: any change to any event is caught and named by seq."""

import dataclasses

from croupier.engine.envelope import GENESIS_HASH, Envelope, seal, verify_chain


def chain(n=5):
    return seal(
        game_id="g1", game_type="t", first_seq=1, prev_hash=GENESIS_HASH, rules_version=1,
        command_id="c1", seat=0, time=123, cause={"command": {"type": "X"}, "draws": [], "events": n},
        events=[("E", 1, {"i": i, "card": f"c{i}"}) for i in range(n)],
    )


def test_an_untouched_chain_verifies():
    envs = chain()
    assert verify_chain(envs) is None
    assert [e.seq for e in envs] == [1, 2, 3, 4, 5]
    assert envs[0].cause is not None and all(e.cause is None for e in envs[1:])


def test_a_changed_payload_is_named_by_seq():
    envs = chain()
    envs[2] = dataclasses.replace(envs[2], payload={"i": 2, "card": "c9"})
    fault = verify_chain(envs)
    assert fault.seq == 3 and "altered" in fault.what


def test_a_removed_event_is_named():
    envs = chain()
    del envs[1]
    assert verify_chain(envs).seq == 2


def test_swapped_events_are_named():
    envs = chain()
    envs[1], envs[2] = envs[2], envs[1]
    fault = verify_chain(envs)
    assert fault.seq == 2 and "out of order" in fault.what


def test_a_rehashed_forgery_still_breaks_the_next_link():
    from croupier.engine.envelope import compute_hash

    envs = chain()
    forged = dataclasses.replace(envs[1], payload={"i": 1, "card": "joker"})
    forged = dataclasses.replace(forged, hash=compute_hash(forged.prev_hash, forged.body()))
    envs[1] = forged
    assert verify_chain(envs).seq == 3


def test_envelopes_round_trip_through_json():
    import json

    env = chain(1)[0]
    assert Envelope.from_dict(json.loads(env.to_json())) == env
