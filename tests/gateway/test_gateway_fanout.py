"""The gateway's savings under load, held to what they must not change: the seat-holder cache
(holders.py) never lets a token act once a holder change is known here, nor past its TTL;
the per-game fan-out (fanout.py) gives each stream its own seat's view only, in order; the
cheaper waits and the remembered token checks behave as before."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses

import pytest

from croupier.projector import feed
from croupier_gateway.core import Gateway
from croupier_gateway.errors import ApiError
from croupier_gateway.feed import Watch
from croupier_gateway.reads import LEFT, is_left, left_by, left_mark
from croupier_gateway.tokens import TokenError, TokenSigner

OP = {"authorization": "Bearer op-secret"}


def run(fake_stack, scenario, *, gateways: int = 1, **overrides):
    """Run scenario(*gateways) with `gateways` gateways over the same (fake) Redis and rules."""
    settings, aredis, _, router = fake_stack
    settings = dataclasses.replace(settings, **overrides)

    async def main():
        gws = [Gateway(settings, aredis, router=router) for _ in range(gateways)]
        try:
            return await scenario(*gws)
        finally:
            for gw in gws:
                await gw.close()

    return asyncio.run(main())


async def until(condition, what: str) -> None:
    """Wait for something the gateway hears asynchronously (a pub/sub message)."""
    for _ in range(500):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"never happened: {what}")


async def refused(gw: Gateway, token: str, gid: str) -> bool:
    try:
        await gw.seat_claims(token, gid)
        return False
    except ApiError as exc:
        assert exc.kind == "unauthenticated", exc
        return True


@contextlib.asynccontextmanager
async def watching(gw: Gateway, gid: str):
    """A spectator's stream of the game on this gateway (so its feed subscription is live)."""
    seen: list = []

    async def follow():
        async for snap in gw.updates(gid, None, 0):
            seen.append(snap)

    task = asyncio.create_task(follow())
    channel = gw.keys.feed(gid)
    await until(lambda: gw.hub.stamp(channel) is not None, "the stream's subscription is confirmed")
    try:
        yield seen
    finally:
        task.cancel()
        with contextlib.suppress(BaseException):
            await task


def test_a_seat_left_through_another_gateway_is_refused_once_its_feed_message_arrives(fake_stack):
    async def scenario(a: Gateway, b: Gateway):
        gid = (await a.create_table("pebbles", 3, {}))["game_id"]
        t1 = (await a.join(gid, 1))["token"]
        jti = a.signer.verify(t1).jti
        async with watching(a, gid):
            assert (await a.seat_claims(t1, gid)).seat == 1
            assert a.holders.get(gid, 1) == jti  # cached: the next check of t1 costs no read
            stamp = a.hub.stamp(a.keys.feed(gid))
            await b.leave(t1, gid, 1)
            await until(lambda: a.hub.stamp(a.keys.feed(gid)) != stamp, "A hears B's seats message")
            assert await refused(a, t1, gid)
            # Taken again through B: the new token works at A at once, the old one does not.
            t1b = (await b.join(gid, 1))["token"]
            assert (await a.seat_claims(t1b, gid)).seat == 1
            assert await refused(a, t1, gid)
            return True

    assert run(fake_stack, scenario, gateways=2)


def test_a_holder_changed_without_a_message_is_refused_after_the_ttl(fake_stack):
    settings, _, sredis, _ = fake_stack
    now = [1000.0]

    async def scenario(a: Gateway):
        a.holders._clock = lambda: now[0]
        gid = (await a.create_table("pebbles", 3, {}))["game_id"]
        t0 = (await a.join(gid, 0))["token"]
        async with watching(a, gid):
            assert (await a.seat_claims(t0, gid)).seat == 0
            # Someone rewrites the holder in Redis and says nothing (an older gateway, a hand).
            sredis.hset(a.reads.seats_key(gid), "0", "someone-else")
            now[0] += a.s.seat_cache_s - 0.5
            stale = await a.seat_claims(t0, gid)  # within the TTL: the cached holder answers
            now[0] += 1.0
            assert await refused(a, t0, gid)  # past it: Redis is asked again
            return stale.seat

    assert run(fake_stack, scenario, seat_cache_s=5.0) == 0


def test_a_seats_message_retires_the_cache_and_nothing_is_cached_without_a_live_feed(fake_stack):
    _, _, sredis, _ = fake_stack

    async def scenario(a: Gateway):
        gid = (await a.create_table("pebbles", 3, {}))["game_id"]
        t0 = (await a.join(gid, 0))["token"]
        # No stream here: every check reads Redis, nothing is kept.
        assert (await a.seat_claims(t0, gid)).seat == 0
        assert len(a.holders) == 0
        async with watching(a, gid):
            assert (await a.seat_claims(t0, gid)).seat == 0
            assert len(a.holders) == 1
            stamp = a.hub.stamp(a.keys.feed(gid))
            sredis.hset(a.reads.seats_key(gid), "0", "someone-else")
            sredis.publish(a.keys.feed(gid), "seats")
            await until(lambda: a.hub.stamp(a.keys.feed(gid)) != stamp, "the seats message arrives")
            assert await refused(a, t0, gid)
        # The stream has ended: the game's feed is no longer watched here, the cache unused.
        await until(lambda: a.hub.stamp(a.keys.feed(gid)) is None, "the room unsubscribes")
        assert a.holders.get(gid, 0) is None
        return True

    assert run(fake_stack, scenario)


def test_a_seat_holders_record_tells_a_holder_from_a_leave_and_whose_leave_it_was():
    mark = left_mark("Ab-_9xYz0123abcd", 17)
    assert left_by(mark) == ("Ab-_9xYz0123abcd", 17) and is_left(mark)
    assert is_left(LEFT) and left_by(LEFT) is None  # an earlier gateway's mark: left, by whom unknown
    for record in (None, "Ab-_9xYz0123abcd"):  # nothing recorded, a holder
        assert not is_left(record) and left_by(record) is None
    for record in ("left:", "left:x:", "left::3", "left:x:y"):  # not a mark this gateway writes
        assert left_by(record) is None


async def _seat_0_followed(a: Gateway, seats: int):
    """A new pebbles table of `seats`, seat 0 joined, and a task following seat 0's stream:
    (game id, token, its claims, the views it got, the error that ended it if any, the task)."""
    gid = (await a.create_table("pebbles", seats, {}))["game_id"]
    t0 = (await a.join(gid, 0))["token"]
    c0 = a.signer.verify(t0)
    got: list = []
    ended: list = []

    async def follow():
        try:
            async for snap in a.updates(gid, c0, 0):
                got.append(snap)
        except ApiError as exc:
            ended.append(exc)

    return gid, t0, c0, got, ended, asyncio.create_task(follow())


@pytest.mark.parametrize("form", ["earlier", "current"])
def test_a_seat_marked_left_ends_its_tokens_stream_and_refuses_it(fake_stack, form):
    """Either form of the mark (the bare "-" of an earlier gateway, still in Redis during a
    rolling upgrade, or left:{jti}:{version}) ends the stream of the token that held the
    seat and refuses it (the cache does not keep it either), though the read models still
    name its join."""
    _, _, sredis, _ = fake_stack

    async def scenario(a: Gateway):
        gid, t0, c0, got, ended, task = await _seat_0_followed(a, 3)
        await until(lambda: got and a.hub.stamp(a.keys.feed(gid)) is not None, "the seat's first view")
        assert (await a.seat_claims(t0, gid)).seat == 0
        assert a.holders.get(gid, 0) == c0.jti  # cached while the feed is live
        sredis.hset(a.reads.seats_key(gid), "0", LEFT if form == "earlier" else left_mark(c0.jti, got[-1].version))
        sredis.publish(a.keys.feed(gid), "seats")
        await asyncio.wait_for(task, 10)
        assert a.holders.get(gid, 0) is None
        return ended, await refused(a, t0, gid)

    ended, refused_after = run(fake_stack, scenario, stream_poll_s=30.0)
    assert ended and ended[0].kind == "unauthenticated"
    assert refused_after


def test_this_gateways_own_leave_refuses_the_token_at_once(fake_stack):
    async def scenario(a: Gateway):
        gid = (await a.create_table("pebbles", 3, {}))["game_id"]
        t2 = (await a.join(gid, 2))["token"]
        async with watching(a, gid):
            assert (await a.seat_claims(t2, gid)).seat == 2
            await a.leave(t2, gid, 2)
            return await refused(a, t2, gid)

    assert run(fake_stack, scenario)


@pytest.mark.parametrize("feed_views", [True, False], ids=["views-in-the-message", "version-alone"])
def test_the_fan_out_sends_each_stream_its_own_seat_and_reads_once_per_update(fake_stack, feed_views):
    """With the projector's message carrying the views, no update costs a read; with a message
    that names the version alone (a projector of an earlier version), one read per update."""
    fake_stack[3].feed_views = feed_views

    async def scenario(a: Gateway):
        gid = (await a.create_table("pebbles", 2, {}))["game_id"]
        tokens = [(await a.join(gid, s))["token"] for s in (0, 1)]
        claims = [a.signer.verify(t) for t in tokens]
        reads = {"views": 0}
        store = a.reads

        class Counted:  # the room's reads, counted
            async def views_and_holders(self, *args):
                reads["views"] += 1
                return await store.views_and_holders(*args)

        a.fanout.reads = Counted()
        got: dict = {0: [], 1: [], None: [], "late": []}

        async def follow(key, c, start=0):
            async for snap in a.updates(gid, c, start):
                got[key].append(snap)

        tasks = [asyncio.create_task(follow(0, claims[0])), asyncio.create_task(follow(1, claims[1])),
                 asyncio.create_task(follow(None, None))]
        await until(lambda: all(got[k] for k in (0, 1, None)), "every stream has its first view")
        assert a.fanout.rooms == 1
        moves = 0
        while True:
            snap = await a.snapshot(gid, claims[moves % 2])
            actions = __import__("json").loads(snap.actions)
            if snap.status == "over" or not actions:
                break
            await a.submit(tokens[moves % 2], gid, f"m{moves}", snap.version, actions[0])
            moves += 1
            if moves == 1:  # a stream that starts mid-game, after the first move
                tasks.append(asyncio.create_task(follow("late", claims[1], 1)))
                # The room's read of that update brought the seats' holders along.
                await until(lambda: len(got[0]) > 1, "seat 0's stream has the first move")
                cached = [a.holders.get(gid, s) for s in (0, 1)]
        await asyncio.wait_for(asyncio.gather(*tasks), 20)
        return got, moves, reads["views"], a.fanout.rooms, cached, [c.jti for c in claims]

    got, moves, view_reads, rooms_after, cached, jtis = run(fake_stack, scenario, stream_poll_s=30.0)
    import json

    assert moves == 4 and rooms_after == 0
    if feed_views:
        assert cached == [jtis[0], None]  # seat 0's own move checked its holder; no read brought seat 1's
    else:
        assert cached == jtis  # the room's read of the first update brought both holders along
    for key, snaps in got.items():
        versions = [s.version for s in snaps]
        assert versions == sorted(set(versions)), (key, versions)  # strictly increasing
        assert snaps[-1].status == "over"
        seat = 1 if key == "late" else key
        for snap in snaps:
            hands = json.loads(snap.view)["game"]["hands"]
            for s, hand in enumerate(hands):
                if s != seat:
                    assert hand is None, (key, snap.version, hands)  # never another seat's pebbles
            if seat is not None and snap.status != "over":
                assert hands[seat] is not None
            if seat is None:
                assert snap.actions == "[]"
    # Every stream saw the final version; each of the 4 moves cost one read for all the streams,
    # or none when the message brought the views.
    assert len({s[-1].version for s in got.values()}) == 1
    if feed_views:
        assert view_reads == 0
    else:
        assert 1 <= view_reads <= moves + 1


def test_a_views_message_is_handed_out_without_a_read_each_seat_its_own(fake_stack):
    """The projector's message carries every seat's view: each stream gets its own seat's (the
    spectator's to a spectator), straight from it; a message that lacks one of them is not
    half used: the room reads the views from Redis instead."""
    sredis = fake_stack[2]

    async def scenario(a: Gateway):
        gid = (await a.create_table("pebbles", 2, {}))["game_id"]
        claims = [a.signer.verify((await a.join(gid, s))["token"]) for s in (0, 1)]
        store, reads = a.reads, []

        class Counted:
            async def views_and_holders(self, *args):
                reads.append(args)
                return await store.views_and_holders(*args)

        a.fanout.reads = Counted()
        got: dict = {0: [], 1: [], None: []}

        async def follow(key, c):
            async for snap in a.updates(gid, c, 0):
                got[key].append(snap)

        tasks = [asyncio.create_task(follow(k, c)) for k, c in ((0, claims[0]), (1, claims[1]), (None, None))]
        await until(lambda: all(got.values()), "every stream has its first view")
        v = got[0][-1].version
        views = {"spectator": '{"who":"spectator"}', "0": '{"who":0}', "actions:0": '[{"type":"A"}]',
                 "1": '{"who":1}', "actions:1": "[]"}
        sredis.publish(a.keys.feed(gid), feed.encode(v + 1, "running", views))
        await until(lambda: all(g[-1].version == v + 1 for g in got.values()), "every stream has the message's views")
        handed = {k: (g[-1].view, g[-1].actions, g[-1].status) for k, g in got.items()}
        reads_after_message = len(reads)
        del views["1"]  # seat 1's view missing: a read
        sredis.publish(a.keys.feed(gid), feed.encode(v + 2, "running", views))
        await until(lambda: len(reads) > reads_after_message, "the room reads from Redis")
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        return handed, reads_after_message, [g[-1].version for g in got.values()], v

    handed, reads_after_message, last, v = run(fake_stack, scenario, stream_poll_s=30.0)
    assert handed == {0: ('{"who":0}', '[{"type":"A"}]', "running"), 1: ('{"who":1}', "[]", "running"),
                      None: ('{"who":"spectator"}', "[]", "running")}
    assert reads_after_message == 0
    assert last == [v + 1] * 3  # Redis still holds v: the read found nothing newer, nothing half-handed


def test_a_watch_keeps_the_views_message_of_the_newest_version_only():
    w = Watch()
    w.notify(5, views=b"five")
    w.notify(4, views=b"four")  # older: kept out
    assert (w.version, w.views) == (5, b"five")
    w.notify(6)  # newer, without views (a projector of an earlier version): none to hand out
    assert (w.version, w.views) == (6, None)
    w.notify(6, views=b"six")
    assert (w.version, w.views) == (6, b"six")


def test_watch_wait_keeps_a_notification_and_times_out():
    async def main():
        w = Watch()
        w.notify(7)
        first = await w.wait(5.0)  # notified before the wait: at once
        timed_out = await w.wait(0.01)
        w.notify(None, seats=True)
        w.notify(3)
        return first, timed_out, await w.wait(5.0), w.version, w.other

    assert asyncio.run(main()) == (True, False, True, 7, False)


def test_a_remembered_token_still_expires():
    signer = TokenSigner("k" * 32)
    token, claims = signer.issue("pebbles-1", 0, 60, now=1000.0)
    assert signer.verify(token, now=1001.0) == claims
    assert signer.verify(token, now=1002.0) == claims  # from memory
    with pytest.raises(TokenError):
        signer.verify(token, now=1060.0)
    with pytest.raises(TokenError):
        signer.verify(token[:-2] + ("A" if token[-2] != "A" else "B") + token[-1], now=1001.0)


def test_a_malformed_action_is_refused_every_time(fake_stack):
    """The gateway remembers well-formed actions per game type and seat; a malformed one is
    refused every time, however often it comes."""

    async def scenario(a: Gateway):
        gid = (await a.create_table("pebbles", 2, {}))["game_id"]
        t0 = (await a.join(gid, 0))["token"]
        t1 = (await a.join(gid, 1))["token"]
        errors = []
        play = (await a.snapshot(gid, a.signer.verify(t0))).actions
        accepted = __import__("json").loads(play)[0]
        await a.submit(t0, gid, "ok", None, accepted)  # well formed, remembered
        for token, action in ((t0, {"type": "Nope"}), (t0, {"type": "Nope"}),
                              (t1, {**accepted, "extra": 1}), (t1, {**accepted, "extra": 1}),
                              (t1, {"type": "Play"})):
            try:
                await a.submit(token, gid, "c", None, action)
            except ApiError as exc:
                errors.append((exc.kind, exc.field))
        return errors

    assert run(fake_stack, scenario) == [("malformed", "action")] * 5


@pytest.mark.parametrize("feed_views", [True, False], ids=["views-in-the-message", "version-alone"])
def test_a_stream_ends_when_its_token_loses_the_seat_before_the_next_holder_is_dealt(fake_stack, feed_views):
    """A seat's stream on one gateway, the seat left and taken by someone else through another:
    the stream ends `unauthenticated` and never carries a view of the new holder's hand."""
    fake_stack[3].feed_views = feed_views

    async def scenario(a: Gateway, b: Gateway):
        import json

        gid = (await a.create_table("pebbles", 2, {}))["game_id"]
        left = await a.join(gid, 0)
        claims = a.signer.verify(left["token"])
        got: list = []
        outcome: dict = {}

        async def follow():
            try:
                async for snap in a.updates(gid, claims, 0):
                    got.append(snap)
            except ApiError as exc:
                outcome["error"] = exc

        task = asyncio.create_task(follow())
        await until(lambda: got, "the stream's first view")
        await b.leave(left["token"], gid, 0)
        await until(lambda: "error" in outcome, "the stream of the token that left ends")
        # someone else takes the seat, the game starts and deals them pebbles
        taken = await b.join(gid, 0)
        await b.join(gid, 1)
        snap = await b.snapshot(gid, b.signer.verify(taken["token"]))
        assert json.loads(snap.view)["game"]["hands"][0] is not None
        await asyncio.wait_for(task, 5)
        return outcome["error"], [json.loads(s.view)["game"]["hands"][0] for s in got if s.status != "open"]

    error, dealt = run(fake_stack, scenario, gateways=2, stream_poll_s=30.0)
    assert error.kind == "unauthenticated"
    assert dealt == []  # not one view with seat 0's hand reached the stream of the token that left


@pytest.mark.parametrize("feed_views", [True, False], ids=["views-in-the-message", "version-alone"])
def test_a_stream_whose_seat_another_join_took_gets_none_of_its_views_though_the_holders_record_lags(
        fake_stack, feed_views):
    """The holders' record can still name a token whose seat is gone: its leave was committed
    but the record's write failed, or another player's join is committed and projected before
    its gateway records the new holder. The read models name the join that holds each seat, in
    the same write as the views: a stream (and a read) of the old token ends there, and never
    gets a view of the seat's new holder."""
    fake_stack[3].feed_views = feed_views
    router = fake_stack[3]

    async def scenario(a: Gateway):
        from croupier.v1 import rules_pb2

        gid, t0, c0, got, ended, task = await _seat_0_followed(a, 2)
        watched: list = []

        async def spectate():  # keeps the game's room, and its feed subscription, alive here
            async for snap in a.updates(gid, None, 0):
                watched.append(snap)

        spectator = asyncio.create_task(spectate())
        await until(lambda: got and watched, "the seat's and the spectator's first views")
        # The leave, and the next player's join, reach the rules service (and the read models)
        # without this gateway's record of holders hearing of either.
        await router.call("pebbles", gid, "LeaveSeat", rules_pb2.LeaveSeatRequest(
            game_type="pebbles", game_id=gid, seat=0, command_id="leave-0"))
        await router.call("pebbles", gid, "JoinSeat", rules_pb2.JoinSeatRequest(
            game_type="pebbles", game_id=gid, seat=0, player="someone else", command_id="join-0b"))
        taken_at = int(await a.reads.version(gid))
        await router.call("pebbles", gid, "JoinSeat", rules_pb2.JoinSeatRequest(
            game_type="pebbles", game_id=gid, seat=1, player="third", command_id="join-1"))
        await asyncio.wait_for(task, 10)
        assert await a.reads.holder(gid, 0) == c0.jti  # the record still names the old token
        try:
            await a.snapshot(gid, c0)
            read_refused = False
        except ApiError as exc:
            read_refused = exc.kind == "unauthenticated"
        # The room's read (the stream's end) must not have cached the old token as the holder.
        command_refused = await refused(a, t0, gid)
        spectator.cancel()
        return got, ended, taken_at, read_refused, command_refused

    got, ended, taken_at, read_refused, command_refused = run(fake_stack, scenario, stream_poll_s=30.0)
    assert ended and ended[0].kind == "unauthenticated"
    assert all(snap.version < taken_at for snap in got), [s.version for s in got]
    assert read_refused
    assert command_refused  # nor may it act for the seat's new holder


def test_a_room_whose_last_stream_lost_its_seat_is_not_joined_while_that_stream_is_stuck(fake_stack):
    """The room's read drops a stream whose token left its seat; with no stream left the room's
    loop ends. The dropped stream's own cleanup comes only when its consumer asks for more,
    which a slow send may delay for long: a new stream of the game must not join the ended
    room meanwhile (it would get its first view, then nothing ever again)."""

    async def scenario(a: Gateway):
        gid = (await a.create_table("pebbles", 3, {}))["game_id"]
        t0 = (await a.join(gid, 0))["token"]
        stuck = a.updates(gid, a.signer.verify(t0), 0)
        await stuck.__anext__()  # its first view; then its consumer is stuck in a send
        room = a.fanout._rooms[gid]
        await a.leave(t0, gid, 0)
        await until(lambda: room.task.done(), "the room's read drops the stream and its loop ends")
        got: list = []

        async def spectate():
            async for snap in a.updates(gid, None, 0):
                got.append(snap)

        task = asyncio.create_task(spectate())
        await until(lambda: got, "the new stream's first view")
        first = got[-1].version
        await a.join(gid, 1)
        try:
            await until(lambda: got[-1].version > first, "the new stream hears of the join")
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            with pytest.raises(ApiError):  # the stuck stream, resumed, ends unauthenticated
                await stuck.__anext__()
            await stuck.aclose()
        return a.fanout.rooms

    assert run(fake_stack, scenario, stream_poll_s=30.0) == 0


def test_a_stream_from_a_version_the_game_never_reached_is_refused_when_it_ends(fake_stack):
    """Only versions above from_version are sent. Above a running game's version a stream
    waits (the read models may be behind what a client was shown), but if the game ends below
    it, not even its final view would be sent and the stream would never end: it is refused,
    400 invalid_from_version, and so is such a stream of a game already over."""

    async def scenario(a: Gateway):
        gid = (await a.create_table("pebbles", 2, {}))["game_id"]
        t0 = (await a.join(gid, 0))["token"]
        await a.join(gid, 1)
        version = (await a.snapshot(gid, None)).version
        refusals = []

        async def follow(claims):
            try:
                async for snap in a.updates(gid, claims, version + 50):
                    refusals.append(("sent", snap.version))
            except ApiError as exc:
                refusals.append((exc.kind, exc.code, exc.field))

        waiting = [asyncio.create_task(follow(c)) for c in (None, a.signer.verify(t0))]
        await asyncio.sleep(0.3)
        assert refusals == [] and not any(t.done() for t in waiting)  # running: they wait
        await a.force_end(gid, "test")
        await asyncio.gather(*waiting)
        final = (await a.snapshot(gid, None)).version
        assert final < version + 50
        await follow(None)  # the game is over already
        return refusals

    refusals = run(fake_stack, lambda a: asyncio.wait_for(scenario(a), 10))
    assert refusals == [("malformed", "invalid_from_version", "from_version")] * 3


def test_a_websocket_from_past_a_finished_games_version_closes_4400(client):
    import json

    from starlette.websockets import WebSocketDisconnect

    gid = client.post("/v1/tables", json={"game_type": "pebbles", "seats": 2}).json()["game_id"]
    ended = client.post(f"/v1/operator/games/{gid}/force-end", json={"reason": "test"}, headers=OP)
    assert ended.status_code == 200, ended.text
    version = client.get(f"/v1/tables/{gid}").json()["version"]
    with client.websocket_connect(f"/v1/tables/{gid}/stream?from_version={version + 1}") as ws:
        ws.send_text("{}")
        assert json.loads(ws.receive_text())["error"]["code"] == "invalid_from_version"
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_text()
        assert closed.value.code == 4400


def test_a_grpc_stream_from_past_a_finished_games_version_is_invalid_argument(fake_stack):
    """StreamUpdates (a spectator) and Play (a seat) refuse it the same way."""
    from croupier_gateway.client import GatewayError, GrpcGateway
    from croupier_gateway.grpc_api import start_server

    async def scenario(a: Gateway):
        server, port = await start_server(a, "127.0.0.1", 0)
        client = GrpcGateway(f"127.0.0.1:{port}", timeout_s=10)
        try:
            gid = (await client.create_table("pebbles", 2))["game_id"]
            t0 = (await client.join(gid, 0))["token"]
            await a.force_end(gid, "test")
            version = (await client.view(gid))["version"]
            refusals = []
            for token in (None, t0):
                try:
                    async for _ in client.updates(gid, token, version + 1):
                        pass
                except GatewayError as exc:
                    refusals.append((exc.status, exc.code))
            return refusals
        finally:
            await client.close()
            await server.stop(0)

    assert run(fake_stack, lambda a: asyncio.wait_for(scenario(a), 10)) == [(400, "invalid_from_version")] * 2


@pytest.mark.parametrize("failing", [1, 99], ids=["once", "for-good"])
def test_a_rooms_read_that_fails_is_tried_again_before_its_streams_fail(fake_stack, failing):
    """One Redis error in a room's read must not end every stream of the game with a 503: the
    room reads again at its next poll; only after 3 failed reads in a row do its streams end,
    with the store's error (store_unavailable)."""
    from redis.exceptions import ConnectionError as RedisConnectionError
    from redis.exceptions import RedisError

    fake_stack[3].feed_views = False  # every update costs the room a read

    async def scenario(a: Gateway):
        gid = (await a.create_table("pebbles", 3, {}))["game_id"]
        claims = a.signer.verify((await a.join(gid, 0))["token"])
        store, attempts = a.reads, []

        class Flaky:
            async def views_and_holders(self, *args):
                attempts.append(len(attempts) < failing)
                if attempts[-1]:
                    raise RedisConnectionError("Connection reset by peer")
                return await store.views_and_holders(*args)

        got: dict = {0: [], None: []}
        errors: dict = {}

        async def follow(key, c):
            try:
                async for snap in a.updates(gid, c, 0):
                    got[key].append(snap)
            except RedisError as exc:
                errors[key] = exc

        tasks = [asyncio.create_task(follow(0, claims)), asyncio.create_task(follow(None, None))]
        await until(lambda: all(got.values()), "every stream has its first view")
        first = got[0][-1].version
        a.fanout.reads = Flaky()
        await a.join(gid, 1)
        await until(lambda: len(errors) == 2 or all(g[-1].version > first for g in got.values()),
                    "the streams hear of the join, or end")
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        return sorted(errors, key=str), all(g[-1].version > first for g in got.values()), attempts

    errors, heard, attempts = run(fake_stack, scenario, stream_poll_s=0.05)
    if failing == 1:
        assert (errors, heard, attempts[0]) == ([], True, True)
    else:
        assert (errors, heard, attempts) == ([0, None], False, [True] * 3)


@pytest.mark.parametrize("faults", [1, 99], ids=["passing", "lasting"])
def test_a_join_whose_token_cannot_be_recorded_names_the_command_id_that_gets_it(fake_stack, faults):
    """A join without a command_id is committed, then Redis fails to record its token. A
    passing fault is tried again; a lasting one answers 503 naming the command_id the gateway
    made up, whose retry gets the seat's token (another would find the seat taken)."""
    import re

    from redis.exceptions import ConnectionError as RedisConnectionError

    async def scenario(a: Gateway):
        gid = (await a.create_table("pebbles", 2, {}))["game_id"]
        real = a.reads.set_holder
        left = [faults]

        async def flaky(*args, **kwargs):
            if left[0] > 0:
                left[0] -= 1
                raise RedisConnectionError("connection reset")
            return await real(*args, **kwargs)

        a.reads.set_holder = flaky
        try:
            joined = await a.join(gid, 0)
        except ApiError as exc:
            assert (exc.kind, exc.code) == ("unavailable", "store_unavailable")
            cid = re.search(r"command_id '([^']+)'", exc.message).group(1)
            left[0] = 0
            with pytest.raises(ApiError) as other:
                await a.join(gid, 0)  # a new command_id: the seat is this join's
            assert other.value.code == "seat_taken"
            joined = await a.join(gid, 0, command_id=cid)
        claims = a.signer.verify(joined["token"])
        assert claims.seat == 0
        return (await a.snapshot(gid, claims)).version

    assert run(fake_stack, scenario) > 0
