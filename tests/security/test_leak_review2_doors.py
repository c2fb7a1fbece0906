"""Hidden cards through the gateway's answers that are not views, and through forks, for
every game type (the second leak review), on the real stack.

tests/security/test_security.py holds views, action lists, tables and replays of a running
game to `hidden()`; tests/e2e checks every stream message. Not checked there, and changed
this review: what a refused move is answered with on each door (HTTP 422/409 bodies, gRPC's
croupier-rejection-bin, a Play answer; a version_conflict's new `current_version`), the
WebSocket's error frames (token_too_late, unexpected_message), and forks of every game type
(tests/e2e/test_e2e_fork.py forks expeditions only).

- a refusal is an error and nothing else: no view, no actions, and its words name no card
  hidden from the seat that sent the move but the ones that move itself named; a
  version_conflict carries the game's version and no more; the same on HTTP, gRPC and Play;
- a WebSocket's refusal frame carries only the error (a seat's and a spectator's stream);
- a fork made by an operator from a running game shows each of its seats nothing the fork
  hides from that seat (view, actions, gRPC GetView, the WebSocket's first message), and a
  spectator nothing at all (HTTP, gRPC, WebSocket, replay, listing) while its origin runs;
- a fork deals the cards hidden at its step again, from the public position and its own seed
  alone, so the origin's record, open to all once it ends, tells nothing of a fork still played.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import uuid

import grpc
import httpx
import pytest

from croupier.engine import registry
from croupier.engine.contract import Rejection
from croupier.engine.selfplay import _probe_ctx, leaks
from croupier.engine.table import RUNNING, TableHost
from croupier.v1 import events_pb2, gateway_pb2, gateway_pb2_grpc
from e2e_helpers import OPERATOR_TOKEN, seats_for, states_by_version

OP = {"authorization": f"Bearer {OPERATOR_TOKEN}"}
ERROR_KEYS = {"code", "message", "kind", "field", "current_version", "retry_after_s"}


def bearer(token: str | None) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"} if token else {}


def names_hidden(text: str, hidden: frozenset, sent: set[str]) -> list[str]:
    """Hidden card ids the words name (as whole tokens), but those the move itself sent."""
    tokens = set(re.split(r"[\s,;:'\"()\[\]{}]+", text))
    return sorted(c for c in hidden - sent if c in tokens)


def seated_running(stack, game_type: str) -> tuple[str, list[str], dict]:
    """A table of this type played a few random moves, still running; its id, tokens and its
    states by version (from the Kafka log)."""
    seats = seats_for(game_type)
    rng = random.Random(f"doors/{game_type}")
    for _deal in range(6):
        created = httpx.post(f"{stack.http_url}/v1/tables", json={"game_type": game_type, "seats": seats}, timeout=30)
        assert created.status_code == 201, created.text
        gid = created.json()["game_id"]
        tokens = []
        for seat in range(seats):
            joined = httpx.post(f"{stack.http_url}/v1/tables/{gid}/seats/{seat}", timeout=30,
                                json={"player": f"p{seat}", "entropy": uuid.uuid4().hex, "command_id": uuid.uuid4().hex})
            assert joined.status_code == 201, joined.text
            tokens.append(joined.json()["token"])
        for _ in range(6):
            view = httpx.get(f"{stack.http_url}/v1/tables/{gid}/view", headers=bearer(tokens[0]), timeout=30).json()
            acting = view["view"]["to_act"]
            if not acting:
                break
            seat = rng.choice(acting)
            actions = httpx.get(f"{stack.http_url}/v1/tables/{gid}/actions", headers=bearer(tokens[seat]),
                                timeout=30).json()
            if not actions["actions"] or actions["version"] != view["version"]:
                continue
            r = httpx.post(f"{stack.http_url}/v1/tables/{gid}/commands", headers=bearer(tokens[seat]), timeout=30,
                           json={"command_id": uuid.uuid4().hex, "action": rng.choice(actions["actions"]),
                                 "expected_version": view["version"]})
            assert r.status_code in (200, 409), r.text
        states = states_by_version(stack.kafka, stack.prefix, game_type, gid)
        if states[max(states)].status == RUNNING:
            return gid, tokens, states
    raise AssertionError(f"no {game_type} table stayed running")


def refused_probes(host: TableHost, state, seat: int, rng: random.Random, limit: int = 10) -> list[tuple[dict, set]]:
    """Moves `seat` may send that its rules refuse now, each with the cards it names: every
    seat's legal moves sent as its own, and with cards hidden from it put in."""
    hidden = sorted(host.spec.hidden(state.game, seat))
    wires = []
    for other in range(state.seats):
        wires += [host.encode_action(a) for a in host.legal_actions(state, other)]
    rng.shuffle(wires)
    out: list[tuple[dict, set]] = []
    for wire in wires:
        variants = [wire]
        for key, value in wire.items():
            if isinstance(value, str) and key != "type" and hidden:
                variants.append({**wire, key: rng.choice(hidden)})
        for variant in variants:
            try:
                host.decide_events(state, host.decode_action(variant, seat), _probe_ctx(state, state.last_time + 1))
            except Rejection:
                sent = {v for v in variant.values() if isinstance(v, str)}
                out.append((variant, sent))
            if len(out) >= limit:
                return out
    return out


def _grpc_refusals(stack, gid: str, token: str, moves: list[tuple[dict, int]]) -> tuple[list, list, list]:
    """Each (move, expected_version) sent as SubmitCommand and on a Play stream: (code,
    Rejection, trailing metadata) for each, the Play answers, and any update Play sent."""
    async def main():
        md = (("authorization", f"Bearer {token}"),)
        async with grpc.aio.insecure_channel(stack.grpc_address) as channel:
            stub = gateway_pb2_grpc.GatewayServiceStub(channel)
            unary = []
            for move, version in moves:
                try:
                    await stub.SubmitCommand(gateway_pb2.SubmitCommandRequest(
                        game_id=gid, command_id=uuid.uuid4().hex, expected_version=version,
                        action_json=json.dumps(move)), metadata=md, timeout=30)
                    unary.append(("OK", None, ()))
                except grpc.aio.AioRpcError as error:
                    trailing = tuple(error.trailing_metadata() or ())
                    raw = dict(trailing).get("croupier-rejection-bin")
                    rejection = events_pb2.Rejection.FromString(raw) if raw else None
                    unary.append((error.code().name, rejection, trailing))
            call = stub.Play(metadata=md, timeout=60)
            await call.write(gateway_pb2.PlayRequest(start=gateway_pb2.StreamUpdatesRequest(
                game_id=gid, from_version=max(v for _, v in moves))))
            for tag, (move, version) in enumerate(moves, 1):
                await call.write(gateway_pb2.PlayRequest(move=gateway_pb2.PlayMove(tag=tag, command=(
                    gateway_pb2.SubmitCommandRequest(command_id=uuid.uuid4().hex, expected_version=version,
                                                     action_json=json.dumps(move))))))
            answers, updates = {}, []
            while len(answers) < len(moves):
                response = await asyncio.wait_for(call.read(), 30)
                assert response is not grpc.aio.EOF, "the Play stream ended before its answers"
                if response.HasField("answer"):
                    answers[response.answer.tag] = response.answer
                else:
                    updates.append(response.update)
            call.cancel()
            return unary, [answers[t] for t in sorted(answers)], updates

    return asyncio.run(main())


@pytest.mark.parametrize("game_type", registry.GAME_IDS)
def test_a_refused_move_is_answered_with_its_refusal_alone_on_every_door(stack_services, game_type):
    s = stack_services
    spec = registry.get(game_type)
    host = TableHost(spec)
    gid, tokens, states = seated_running(s, game_type)
    version = max(states)
    state = states[version]
    rng = random.Random(f"refusals/{game_type}")
    checked = 0
    for seat, token in enumerate(tokens):
        hidden = spec.hidden(state.game, seat)
        probes = refused_probes(host, state, seat, rng)
        # A legal move of the seat's (if it has one) with an old expected_version: a conflict.
        legal = [host.encode_action(a) for a in host.legal_actions(state, seat)]
        conflict = legal[0] if legal else None
        for move, sent in probes:
            r = httpx.post(f"{s.http_url}/v1/tables/{gid}/commands", headers=bearer(token), timeout=30,
                           json={"command_id": uuid.uuid4().hex, "action": move, "expected_version": version})
            assert 400 <= r.status_code < 500, (move, r.status_code, r.text[:300])
            body = r.json()
            assert set(body) == {"error"} and set(body["error"]) <= ERROR_KEYS, body
            assert not names_hidden(json.dumps(body), hidden, sent), (move, body)
            checked += 1
        if conflict is not None and version > 1:
            r = httpx.post(f"{s.http_url}/v1/tables/{gid}/commands", headers=bearer(token), timeout=30,
                           json={"command_id": uuid.uuid4().hex, "action": conflict, "expected_version": version - 1})
            assert r.status_code == 409, r.text
            body = r.json()
            assert set(body) == {"error"} and set(body["error"]) <= ERROR_KEYS, body
            assert body["error"]["code"] == "version_conflict" and body["error"]["current_version"] == version, body
            assert not names_hidden(json.dumps(body), hidden, set()), body
        sends = [(move, version) for move, _ in probes]
        if conflict is not None and version > 1:
            sends.append((conflict, version - 1))
            probes.append((conflict, set()))
        unary, answers, updates = _grpc_refusals(s, gid, token, sends)
        assert len(unary) == len(answers) == len(probes)
        for (move, sent), (_, expected), (code, rejection, trailing), answer in zip(probes, sends, unary, answers):
            assert code != "OK" and rejection is not None, (move, code)
            assert not names_hidden(rejection.message, hidden, sent), (move, rejection.message)
            keys = {k for k, _ in trailing}
            assert keys <= {"croupier-rejection-bin", "retry-after", "current-version"}, keys
            assert not answer.HasField("response") and answer.rejection.code, answer
            assert not names_hidden(answer.rejection.message, hidden, sent), (move, answer.rejection.message)
            if expected != version:  # the conflict: the game's version, and nothing more
                assert (code, rejection.code) == ("ABORTED", "version_conflict"), (code, rejection)
                assert dict(trailing).get("current-version") == str(version), trailing
                assert answer.current_version == version, answer
            checked += 1
        for update in updates:  # none is due (nothing was accepted), but any sent is the seat's own
            assert not leaks(json.loads(update.view_json), spec.hidden(states[max(states)].game, seat))
    after = states_by_version(s.kafka, s.prefix, game_type, gid)
    assert max(after) == version, "a refused move changed the game"
    assert checked >= len(tokens), checked


def _ws_frames(stack, gid: str, token: str | None, then: str) -> tuple[list[dict], int]:
    """The frames a stream sends before and with its refusal of the message `then`."""
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed

    async def main():
        url = stack.http_url.replace("http://", "ws://") + f"/v1/tables/{gid}/stream?from_version=0"
        frames = []
        async with connect(url, open_timeout=10) as ws:
            await ws.send(json.dumps({"token": token}) if token else "{}")
            frames.append(json.loads(await asyncio.wait_for(ws.recv(), 10)))  # the view now
            await ws.send(then)
            try:
                while True:
                    frames.append(json.loads(await asyncio.wait_for(ws.recv(), 10)))
            except ConnectionClosed as closed:
                return frames, (closed.rcvd.code if closed.rcvd else 1006)

    return asyncio.run(main())


@pytest.mark.parametrize("game_type", registry.GAME_IDS)
def test_a_websockets_refusal_frame_carries_the_error_alone(stack_services, game_type):
    s = stack_services
    spec = registry.get(game_type)
    gid, tokens, states = seated_running(s, game_type)
    for seat, token in [(None, None), *enumerate(tokens)]:
        # A move sent down the stream, and another seat's token (or, on the last seat's, a
        # spectator's {}) after the stream's own: each refused, unexpected_message.
        other = json.dumps({"token": tokens[-1]} if seat != len(tokens) - 1 else {})
        for then in ('{"move": {"type": "x"}}', other):
            frames, code = _ws_frames(s, gid, token, then)
            assert code == 4400, (seat, code, frames[-1:])
            *views, refusal = frames
            assert set(refusal) == {"error"} and set(refusal["error"]) <= ERROR_KEYS, refusal
            assert refusal["error"]["code"] == "unexpected_message", refusal
            for view in views:
                assert set(view) == {"version", "view", "actions"}, view.keys()
                hidden = spec.hidden(states[view["version"]].game, seat)
                assert not leaks(view, hidden), (seat, sorted(leaks(view, hidden))[:5])
                assert seat is not None or view["actions"] == []


def _grpc_view(stack, gid: str, token: str | None):
    async def main():
        async with grpc.aio.insecure_channel(stack.grpc_address) as channel:
            stub = gateway_pb2_grpc.GatewayServiceStub(channel)
            md = (("authorization", f"Bearer {token}"),) if token else ()
            try:
                view = await stub.GetView(gateway_pb2.GetViewRequest(game_id=gid), metadata=md, timeout=30)
            except grpc.aio.AioRpcError as error:
                return error.code().name, None
            return "OK", (view.version, json.loads(view.view_json))

    return asyncio.run(main())


@pytest.mark.parametrize("game_type", registry.GAME_IDS)
def test_a_fork_of_a_running_game_shows_its_seats_only_what_they_saw_and_spectators_nothing(stack_services, game_type):
    s = stack_services
    spec = registry.get(game_type)
    gid, tokens, states = seated_running(s, game_type)
    at = max(states)
    origin = states[at]
    forked = httpx.post(f"{s.http_url}/v1/operator/games/{gid}/fork", json={"at": at, "command_id": uuid.uuid4().hex},
                        headers=OP, timeout=60)
    assert forked.status_code in (200, 201), forked.text
    fork = forked.json()["game_id"]
    fork_states = states_by_version(s.kafka, s.prefix, game_type, fork)
    fork_game = fork_states[max(fork_states)].game
    fork_tokens = []
    for seat in range(origin.seats):
        r = httpx.post(f"{s.http_url}/v1/operator/games/{fork}/seats/{seat}/token", headers=OP, timeout=30)
        assert r.status_code in (200, 201), r.text
        fork_tokens.append(r.json()["token"])
    for seat, token in enumerate(fork_tokens):
        hidden = spec.hidden(fork_game, seat)
        view = httpx.get(f"{s.http_url}/v1/tables/{fork}/view", headers=bearer(token), timeout=30)
        assert view.status_code == 200, view.text
        assert view.json()["view"]["origin"]["game_id"] == gid
        actions = httpx.get(f"{s.http_url}/v1/tables/{fork}/actions", headers=bearer(token), timeout=30).json()
        code, grpc_view = _grpc_view(s, fork, token)
        assert code == "OK"
        frames, _ = _ws_frames(s, fork, token, "{}")
        code, first = _grpc_first_update(s, fork, token, "Play")
        assert code == "OK", code
        for what, payload in (("view", view.json()), ("actions", actions), ("gRPC view", grpc_view[1]),
                              ("stream", frames[0]), ("Play", first)):
            found = leaks(payload, hidden)
            assert not found, f"the fork's {what} shows seat {seat} its hidden {sorted(found)[:5]}"
    # A spectator: nothing of it while the origin runs.
    r = httpx.get(f"{s.http_url}/v1/tables/{fork}/view", timeout=30)
    assert r.status_code == 403 and r.json()["error"]["code"] == "fork_of_running_game", r.text
    assert _grpc_view(s, fork, None)[0] == "PERMISSION_DENIED"
    assert _grpc_first_update(s, fork, None, "StreamUpdates")[0] == "PERMISSION_DENIED"
    frames, code = _ws_frames_refused(s, fork)
    assert code == 4403 and frames and set(frames[-1]) == {"error"}, (code, frames)
    r = httpx.get(f"{s.http_url}/v1/tables/{fork}/replay", timeout=30)
    assert r.status_code == 403, r.text
    listed = httpx.get(f"{s.http_url}/v1/tables", params={"status": "running", "game_type": game_type, "limit": 200},
                       timeout=30).json()["tables"]
    assert fork not in {t["game_id"] for t in listed}
    facts = httpx.get(f"{s.http_url}/v1/tables/{fork}", timeout=30).json()
    assert facts.get("result") is None and "view" not in facts
    assert not leaks(facts, spec.hidden(fork_game, None) | spec.hidden(origin.game, None))


def _grpc_first_update(stack, gid: str, token: str | None, method: str):
    """The first update of a StreamUpdates or Play stream (its status code name, and the
    update as {"version", "view", "actions"})."""
    async def main():
        md = (("authorization", f"Bearer {token}"),) if token else ()
        async with grpc.aio.insecure_channel(stack.grpc_address) as channel:
            stub = gateway_pb2_grpc.GatewayServiceStub(channel)
            start = gateway_pb2.StreamUpdatesRequest(game_id=gid, from_version=0)
            try:
                if method == "Play":
                    call = stub.Play(metadata=md, timeout=30)
                    await call.write(gateway_pb2.PlayRequest(start=start))
                    response = await asyncio.wait_for(call.read(), 20)
                    update = response.update
                else:
                    call = stub.StreamUpdates(start, metadata=md, timeout=30)
                    update = await asyncio.wait_for(call.read(), 20)
                call.cancel()
            except grpc.aio.AioRpcError as error:
                return error.code().name, None
            return "OK", {"version": update.version, "view": json.loads(update.view_json),
                          "actions": [json.loads(a) for a in update.actions_json]}

    return asyncio.run(main())


def _ws_frames_refused(stack, gid: str) -> tuple[list[dict], int]:
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed

    async def main():
        url = stack.http_url.replace("http://", "ws://") + f"/v1/tables/{gid}/stream?from_version=0"
        frames = []
        async with connect(url, open_timeout=10) as ws:
            await ws.send("{}")
            try:
                while True:
                    frames.append(json.loads(await asyncio.wait_for(ws.recv(), 10)))
            except ConnectionClosed as closed:
                return frames, (closed.rcvd.code if closed.rcvd else 1006)

    return asyncio.run(main())


def test_seat_tokens_reach_no_log(stack_services, tmp_path):
    """A seat token is the seat's hidden cards for its lifetime (12 h): none reaches a log, on
    a gateway logging at debug, whichever way it came (the WebSocket's ?token=, its header or
    first message, HTTP, gRPC, a refused move, a token of another table). test_security checks
    the signing key and the operator token only."""
    from test_security import start_gateway

    s = stack_services
    url, grpc_port, svc = start_gateway(s, tmp_path, CROUPIER_LOG_LEVEL="debug")
    try:
        gateway = type("G", (), {"http_url": url, "grpc_address": f"127.0.0.1:{grpc_port}", "kafka": s.kafka,
                                 "prefix": s.prefix})
        gid, tokens, _ = seated_running(gateway, "expeditions")
        other, other_tokens, _ = seated_running(gateway, "journey")
        from websockets.asyncio.client import connect
        from websockets.exceptions import ConnectionClosed

        async def streams():
            ws_url = url.replace("http://", "ws://") + f"/v1/tables/{gid}/stream?from_version=0"
            async with connect(ws_url + f"&token={tokens[0]}", open_timeout=10) as ws:
                await asyncio.wait_for(ws.recv(), 10)
            async with connect(ws_url, additional_headers=bearer(tokens[1]), open_timeout=10) as ws:
                await asyncio.wait_for(ws.recv(), 10)
            async with connect(ws_url + f"&token={other_tokens[0]}", open_timeout=10) as ws:  # another table's
                with pytest.raises(ConnectionClosed):  # refused: 4403 wrong_table
                    while True:
                        await asyncio.wait_for(ws.recv(), 10)

        asyncio.run(streams())
        httpx.post(f"{url}/v1/tables/{gid}/commands", headers=bearer(tokens[0]), timeout=30,
                   json={"command_id": uuid.uuid4().hex, "action": {"type": "NoSuchMove"}})
        httpx.get(f"{url}/v1/tables/{gid}/view", headers=bearer(other_tokens[1]), timeout=30)
        _grpc_view(gateway, gid, tokens[1])
        _grpc_view(gateway, gid, other_tokens[0])
    finally:
        svc.stop()
    text = svc.log_path.read_text(errors="replace")
    assert len(text) > 200, text
    for token in tokens + other_tokens:
        body, _, signature = token.partition(".")
        assert signature not in text and body not in text, "a seat token is in the gateway's log"


@pytest.mark.parametrize("game_type", registry.GAME_IDS)
def test_a_fork_still_played_keeps_its_hidden_cards_when_its_origin_ends(stack_services, game_type):
    """A fork used to start from its origin's hands and decks, so once the origin was over
    (its replay as any seat open to anybody, its seed revealed, from which its shuffles follow)
    every hidden card of a fork still played was given away. A fork now deals the cards hidden
    at its step again with its own seed (GameSpec.redeal, ForkTable.deal). Through the stack:
    the origin ends and its record opens, while the fork plays on; the fork's game, read from
    its log, is the deal of the origin's public position by the fork's own draws, and the
    origin with its hidden cards laid out any other way is dealt into the very same game. So
    nothing the origin's record shows of where its hidden cards were tells anything of the
    fork's: they are a function of what everybody saw and of the fork's seed, which stays
    secret until the fork ends."""
    from croupier.engine.contract import Context
    from croupier.engine.rng import FairRng
    from croupier.engine.table import DEAL_AGAIN, DEAL_KEPT
    from e2e_helpers import read_game_log

    s = stack_services
    spec = registry.get(game_type)
    host = TableHost(spec)
    gid, tokens, states = seated_running(s, game_type)
    at = max(states)
    forked = httpx.post(f"{s.http_url}/v1/operator/games/{gid}/fork", json={"at": at, "command_id": uuid.uuid4().hex},
                        headers=OP, timeout=60)
    assert forked.status_code in (200, 201), forked.text
    fork = forked.json()["game_id"]
    ended = httpx.post(f"{s.http_url}/v1/operator/games/{gid}/force-end", headers=OP, timeout=60,
                       json={"reason": "leak review: the origin ends, its fork plays on"})
    assert ended.status_code == 200, ended.text
    assert httpx.get(f"{s.http_url}/v1/tables/{gid}", timeout=30).json()["status"] == "over"
    # The origin's record is open: its replay as another seat, its seed.
    r = httpx.get(f"{s.http_url}/v1/tables/{gid}/replay", params={"as": "1", "to": at}, timeout=60)
    assert r.status_code == 200, r.text
    origin_log = [e for e in read_game_log(s.kafka, s.prefix, game_type, gid) if e.seq <= at]
    fork_log = read_game_log(s.kafka, s.prefix, game_type, fork)
    fork_now = host.fold(fork_log)
    assert fork_now.status == RUNNING  # the fork plays on
    first = fork_log[0]
    assert first.cause["command"]["deal"] == DEAL_AGAIN and first.cause["draws"], "the fork did not deal again"
    dealt = host.fold(fork_log[:first.cause["events"]])
    kept = host.fold(host.fork("kept", origin_log, "ab" * 32, now=first.time, deal=DEAL_KEPT))
    assert spec.view(dealt.game, None) == spec.view(kept.game, None)  # the same public position
    assert dealt.game != kept.game, "the fork kept its origin's hidden cards"

    def deal(game):
        ctx = Context(rng=FairRng(fork_now.seed, dealt.entropy, 0), now=first.time)
        for event in spec.redeal(game, ctx):
            game = spec.evolve(game, event)
        return game

    assert deal(kept.game) == dealt.game  # the fork's deal: its own draws over the public position
    for other_seed in ("cd" * 32, "ef" * 32):
        laid_otherwise = host.fold(host.fork("other", origin_log, other_seed, now=first.time)).game
        assert deal(laid_otherwise) == dealt.game, "the fork's deal depends on where the origin had its cards"


@pytest.mark.parametrize("game_type", registry.GAME_IDS)
def test_the_rules_services_reads_and_refusals_hold_each_seat_to_its_own(stack_services, game_type):
    """The rules service's own gRPC (inside the platform: the gateway's door to it, and what
    an operator's tools call): GetState for each seat and a spectator, ListLegalActions for
    each seat, and HandleCommand's refusal of every refused probe, against the log's state."""
    import redis as redis_lib

    from croupier.rules.owners import owners_key
    from croupier.rules.store import partition_for
    from croupier.v1 import rules_pb2, rules_pb2_grpc
    from e2e_helpers import PARTITIONS

    s = stack_services
    spec = registry.get(game_type)
    host = TableHost(spec)
    gid, _, states = seated_running(s, game_type)
    version = max(states)
    state = states[version]
    client = redis_lib.Redis.from_url(s.redis_url)
    try:
        owner = client.hget(owners_key(s.prefix, game_type), str(partition_for(gid, PARTITIONS)))
    finally:
        client.close()
    assert owner, "no owner of the game's partition in Redis"
    rng = random.Random(f"rules/{game_type}")

    async def main():
        async with grpc.aio.insecure_channel(owner.decode()) as channel:
            stub = rules_pb2_grpc.RulesServiceStub(channel)
            faults = []
            for seat in [None, *range(state.seats)]:
                hidden = spec.hidden(state.game, seat)
                request = rules_pb2.GetStateRequest(game_type=game_type, game_id=gid)
                if seat is not None:
                    request.seat = seat
                got = await stub.GetState(request, timeout=30)
                view = json.loads(got.view_json)
                if got.version != version or view.get("you") != seat or leaks(view, hidden):
                    faults.append(f"GetState as {seat}: v{got.version}, you={view.get('you')}, "
                                  f"{sorted(leaks(view, hidden))[:5]}")
                if seat is None:
                    continue
                listed = await stub.ListLegalActions(rules_pb2.ListLegalActionsRequest(
                    game_type=game_type, game_id=gid, seat=seat), timeout=30)
                if leaks([json.loads(a) for a in listed.actions_json], hidden):
                    faults.append(f"ListLegalActions of {seat} shows hidden cards")
                for move, sent in refused_probes(host, state, seat, rng, limit=6):
                    try:
                        await stub.HandleCommand(rules_pb2.HandleCommandRequest(
                            game_type=game_type, game_id=gid, seat=seat, command_id=f"leak-{uuid.uuid4().hex}",
                            expected_version=version, action_json=json.dumps(move)), timeout=30)
                        faults.append(f"{move} of seat {seat} was accepted")
                    except grpc.aio.AioRpcError as error:
                        raw = dict(error.trailing_metadata() or ()).get("croupier-rejection-bin")
                        rejection = events_pb2.Rejection.FromString(raw) if raw else None
                        if rejection is None or names_hidden(rejection.message, hidden, sent):
                            faults.append(f"{move} of seat {seat}: {rejection}")
            return faults

    faults = asyncio.run(main())
    assert not faults, "\n".join(faults[:10])
    assert max(states_by_version(s.kafka, s.prefix, game_type, gid)) == version
