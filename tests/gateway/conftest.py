"""Fast gateway tests: no Kafka, no rules service. The app runs on a fake Redis (fakeredis)
that the tests fill as the projector would, with a fake router in place of the rules
replicas, and a tiny two-seat card game ("pebbles") registered for the duration of a test, so
these tests do not depend on which real games are merged.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

import fakeredis
import pytest

from croupier.engine import registry
from croupier.engine.codec import canonical_json
from croupier.engine.contract import Command, Event, GameSpec, OptionSpec, Rejection, Start
from croupier.engine.local import LocalTable
from croupier.engine.table import TableState
from croupier.projector import feed
from croupier.projector.keys import Keys
from croupier.v1 import rules_pb2

# -- pebbles: each seat holds two hidden pebbles and plays them in turn ---------------------

PEBBLES = tuple(f"pebble-{i}" for i in range(8))


@dataclass(frozen=True, kw_only=True)
class Play(Command):
    TYPE: ClassVar[str] = "Play"
    pebble: str


@dataclass(frozen=True, kw_only=True)
class Dealt(Event):
    TYPE: ClassVar[str] = "Dealt"
    hands: tuple


@dataclass(frozen=True, kw_only=True)
class Played(Event):
    TYPE: ClassVar[str] = "Played"
    seat: int
    pebble: str


@dataclass(frozen=True)
class State:
    seats: int
    hands: tuple = ()
    played: tuple = ()
    turn: int = 0


def initial_state(options, seats):
    return State(seats=seats)


def decide(command, state, ctx):
    if isinstance(command, Start):
        deck = ctx.rng.shuffle(list(PEBBLES))
        return [Dealt(hands=tuple(tuple(deck[2 * s:2 * s + 2]) for s in range(state.seats)))]
    if isinstance(command, Play):
        if command.seat != state.turn:
            raise Rejection("not_your_turn", "wait for your turn")
        if command.pebble not in state.hands[command.seat]:
            raise Rejection("not_in_hand", f"{command.pebble!r} is not in your hand")
        return [Played(seat=command.seat, pebble=command.pebble)]
    raise Rejection("unknown", "?", "malformed")


def evolve(state, event):
    if isinstance(event, Dealt):
        return dataclasses.replace(state, hands=event.hands)
    if isinstance(event, Played):
        hands = list(state.hands)
        hands[event.seat] = tuple(p for p in hands[event.seat] if p != event.pebble)
        return dataclasses.replace(state, hands=tuple(hands), played=state.played + (event.pebble,),
                                   turn=(state.turn + 1) % state.seats)
    return state


def view(state, seat):
    return {
        "hands": [list(h) if s == seat else None for s, h in enumerate(state.hands)],
        "counts": [len(h) for h in state.hands],
        "played": list(state.played),
        "turn": state.turn,
    }


def legal_actions(state, seat):
    if not state.hands or seat != state.turn or is_over(state):
        return []
    return [Play(seat=seat, pebble=p) for p in sorted(state.hands[seat])]


def is_over(state):
    return bool(state.hands) and all(not h for h in state.hands)


def hidden(state, seat):
    held = {p for s, h in enumerate(state.hands) if s != seat for p in h}
    return frozenset(held | (set(PEBBLES) - {p for h in state.hands for p in h} - set(state.played)))


SPEC = GameSpec(
    id="pebbles", name="Pebbles", min_seats=2, max_seats=3, rules_version=1,
    options=(OptionSpec("speed", 1, "how fast", minimum=1, maximum=3),),
    commands=(Play,), events=(Dealt, Played),
    initial_state=initial_state, decide=decide, evolve=evolve, view=view, legal_actions=legal_actions,
    is_over=is_over, result=lambda s: {"winners": [0]}, to_act=lambda s: (s.turn,) if not is_over(s) else (),
    hidden=hidden, describe=lambda e: e.TYPE, summary="A test game.",
)


@pytest.fixture
def pebbles(monkeypatch):
    monkeypatch.setattr(registry, "GAME_IDS", ("pebbles",))
    monkeypatch.setitem(registry._cache, "pebbles", SPEC)
    return SPEC


# -- a projector in miniature -----------------------------------------------------------


def project(r, keys: Keys, table: LocalTable, *, feed_views: bool = True) -> None:
    """Write a table's read models the way the projector does (meta, views, listings, feed).
    feed_views=False publishes the version alone, as a projector of an earlier version did."""
    state: TableState = table.state
    host = table.host
    gid = table.game_id
    meta = {
        "version": state.version, "game_type": state.game_type, "status": state.status, "seats": state.seats,
        "players": canonical_json([None if p is None else dict(p) for p in state.players]),
        "free_seats": sum(p is None for p in state.players),
        "result": canonical_json(state.result) if state.result is not None else "",
        "end_reason": state.end_reason or "", "seed_hash": state.seed_hash,
        "options": canonical_json(state.options), "created": state.created, "updated": state.last_time,
    }
    before = int(r.hget(keys.meta(gid), "version") or 0)
    changed = {}  # the joins this projection changes: its feed message names them
    for env in table.log.read(gid):  # which join holds each seat, as the projector keeps it
        if env.type in ("SeatJoined", "SeatLeft"):
            field = f"joined:{env.payload['seat']}"
            meta[field] = env.seq if env.type == "SeatJoined" else 0
            if env.seq > before:
                changed[field] = str(meta[field])
    views = {"spectator": canonical_json(host.view(state, None))}
    for seat in range(state.seats):
        views[str(seat)] = canonical_json(host.view(state, seat))
        views[f"actions:{seat}"] = canonical_json([host.encode_action(a) for a in host.legal_actions(state, seat)])
    r.hset(keys.meta(gid), mapping=meta)
    r.delete(keys.views(gid))
    r.hset(keys.views(gid), mapping=views)
    if state.status == "open":
        r.zadd(keys.lobby(state.game_type), {gid: state.created})
    else:
        r.zrem(keys.lobby(state.game_type), gid)
    r.zadd(keys.all_games(), {f"{state.game_type}:{gid}": state.created})
    r.publish(keys.feed(gid), feed.encode(state.version, state.status, {**views, **changed}) if feed_views
              else state.version)


class FakeRouter:
    """Stands in for the rules replicas: applies commands to LocalTables and projects them,
    or raises what a test tells it to."""

    def __init__(self, r, keys: Keys):
        self.r = r
        self.keys = keys
        self.tables: dict[str, LocalTable] = {}
        self.creates: dict[str, str] = {}  # game id -> the command_id that created it
        self.calls: list[tuple[str, Any]] = []
        self.fail: Rejection | None = None
        # The next this many creates are refused already_exists, as a rules replica refuses an
        # id its filter of forgotten games takes for one of theirs.
        self.refuse_creates = 0
        self.feed_views = True  # False: publish as a projector of an earlier version (the version alone)
        self.projecting = True  # False: commands change the tables but not the read models (a projector behind)
        # The next this many writes commit (and are projected) but answer UNAVAILABLE, as a
        # router whose deadline ran out after the rules service committed.
        self.lose_answers = 0

    async def call(self, game_type, game_id, method, request):
        from croupier.engine.table import ForceEnd, JoinSeat, LeaveSeat

        self.calls.append((method, request))
        if self.fail is not None:
            raise self.fail
        if method == "CreateGame":
            if self.refuse_creates:
                self.refuse_creates -= 1
                raise Rejection("already_exists", f"game id {game_id} was used by a game that ended long ago",
                                "already_exists")
            known = self.tables.get(game_id)
            if known is not None:  # as a replica answers: a duplicate of its create, else the id is taken
                if self.creates.get(game_id) != request.command_id:
                    raise Rejection("already_exists", f"game {game_id} exists", "already_exists")
                first = known.envelopes[0]
                return rules_pb2.CreateGameResponse(
                    result=rules_pb2.CommandResult(game_id=game_id, first_seq=first.seq, last_seq=first.seq,
                                                   version=first.seq, duplicate=True),
                    seed_hash=known.state.seed_hash)
            self.creates[game_id] = request.command_id
            table = LocalTable(registry.get(game_type), game_id, request.seats, dict(request.options), "ab" * 32)
            self.tables[game_id] = table
            project(self.r, self.keys, table, feed_views=self.feed_views)
            v = table.state.version
            return rules_pb2.CreateGameResponse(result=rules_pb2.CommandResult(game_id=game_id, version=v),
                                                seed_hash=table.state.seed_hash)
        table = self.tables.get(game_id)
        if table is None:
            raise Rejection("no_such_game", f"no game {game_id}", "not_found")
        if method == "JoinSeat":
            cmd = JoinSeat(seat=request.seat, player=request.player, bot=request.bot or None, entropy=request.entropy)
        elif method == "LeaveSeat":
            cmd = LeaveSeat(seat=request.seat)
        elif method == "ForceEnd":
            cmd = ForceEnd(reason=request.reason)
        else:
            import json

            cmd = table.host.decode_action(json.loads(request.action_json), request.seat)
        expected = (request.expected_version if method in ("HandleCommand", "LeaveSeat") and request.HasField("expected_version")
                    else None)
        # A command_id seen before gets its original result, marked, as from a rules replica.
        duplicate = bool(request.command_id) and request.command_id in table._seen
        envs = table.handle(cmd, command_id=request.command_id, expected_version=expected)
        if self.projecting:
            project(self.r, self.keys, table, feed_views=self.feed_views)
        result = rules_pb2.CommandResult(game_id=game_id, first_seq=envs[0].seq, last_seq=envs[-1].seq,
                                         version=envs[-1].seq if duplicate else table.state.version,
                                         duplicate=duplicate)
        if self.lose_answers:
            self.lose_answers -= 1
            raise Rejection("unavailable", "the rules service did not answer in time", "unavailable")
        return getattr(rules_pb2, f"{method}Response")(result=result)

    async def owner_of(self, game_type, game_id, refresh=False):
        return "127.0.0.1:1"

    async def owners(self, game_type, refresh=False):
        from croupier_gateway.routing import _Owners

        return _Owners(1, {0: "127.0.0.1:1"}, 0.0)

    async def close(self):
        pass


@pytest.fixture
def fake_stack(pebbles):
    """(settings, async fake redis, sync view of the same data, router)."""
    from croupier_gateway.settings import GatewaySettings

    server = fakeredis.FakeServer()
    aredis = fakeredis.aioredis.FakeRedis(server=server)
    sredis = fakeredis.FakeRedis(server=server)
    keys = Keys("")
    router = FakeRouter(sredis, keys)
    settings = GatewaySettings(operator_token="op-secret", projection_wait_s=0.5, stream_poll_s=0.2,
                               ws_auth_wait_s=0.2, rate_limit_per_s=1000, rate_limit_burst=1000)
    return settings, aredis, sredis, router


@pytest.fixture
def client(fake_stack):
    from starlette.testclient import TestClient

    from croupier_gateway.app import create_app

    settings, aredis, _, router = fake_stack
    app = create_app(settings, redis=aredis, router=router)
    with TestClient(app) as c:
        yield c
