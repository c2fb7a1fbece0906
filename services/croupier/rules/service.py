"""The gRPC face of a rules replica (`croupier serve rules --game G`)."""

from __future__ import annotations

import asyncio
import secrets
import signal
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc
import redis
import structlog
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1._async import HealthServicer
from grpc_reflection.v1alpha import reflection

from croupier.config import LogSettings
from croupier.engine import registry
from croupier.engine.audit import folded
from croupier.engine.codec import canonical_json, loads
from croupier.engine.contract import NOT_FOUND, Rejection, clip
from croupier.engine.table import DEAL_AGAIN, DEAL_KEPT, ForceEnd, JoinSeat, LeaveSeat, TableHost
from croupier.rules.errors import KIND_TO_STATUS, Refusal, bounded, to_proto, trailing
from croupier.rules.metrics import RulesMetrics
from croupier.rules.owners import OwnersTable
from croupier.rules.partition import LOST, NOT_OWNER, READY, TIMER_ID_PREFIXES, UNAVAILABLE, Outcome, Pending, unreadable
from croupier.rules.replica import Replica
from croupier.rules.settings import RulesSettings
from croupier.rules.snapshot import SnapshotStore
from croupier.rules.store import ensure_topic, partition_for, read_game
from croupier.runtime import GRPC_SERVER_OPTIONS, ListenError, listen  # noqa: F401 (ListenError: serve's callers catch it here)
from croupier.tagged import answer_each
from croupier.v1 import rules_pb2, rules_pb2_grpc

log = structlog.get_logger("croupier.rules")

COMMAND_TIMEOUT_S = 10.0
MAX_ID = 128
MAX_GAME_TYPE = 64
# Reads of a game's log (GetState of a retired or forgotten game, ForkGame's origin) at once
# per replica: each reads its partition (records of other games skipped by key) and folds the
# game, ~0.4 s of a thread and of the GIL. One more is refused `log_reads_busy`, retryable.
MAX_LOG_READS = 2
MAX_ACTION_JSON = 16 * 1024
# A ForceEnd's reason: TableEnded keeps its first 200 characters, and the command recorded
# in the event's cause keeps what was sent, so a longer one is refused (as the gateway does).
MAX_REASON = 200


SERVICE_NAME = rules_pb2.DESCRIPTOR.services_by_name["RulesService"].full_name


class Undecodable:
    """A request whose bytes are no message of its type (corrupt framing, a string field that
    is not UTF-8), as the servicer's deserializers hand it on: grpc's own failed the call
    UNKNOWN, with no Rejection and a traceback in the log. `tag`: a HandleCommands request's
    tag when its own framing could be read (its move is then refused alone), else None."""

    __slots__ = ("error", "tag")

    def __init__(self, error: str, tag: int | None = None):
        self.error, self.tag = error, tag

    def rejection(self) -> Rejection:
        return Rejection("malformed_request", f"the request is not a valid {clip(self.error, 200)}", "malformed")


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while pos < len(data) and shift < 64:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value & 0xFFFFFFFFFFFFFFFF, pos
        shift += 7
    raise ValueError("bad varint")


def _tag_of(data: bytes) -> int | None:
    """The tag (field 1, a varint) of a HandleCommandsRequest's bytes when the message's own
    fields can be walked, whatever its command holds; None when they cannot."""
    tag, pos = 0, 0
    try:
        while pos < len(data):
            key, pos = _varint(data, pos)
            field, wire = key >> 3, key & 7
            if wire == 0:
                value, pos = _varint(data, pos)
                if field == 1:
                    tag = value
            elif wire == 2:
                size, pos = _varint(data, pos)
                pos += size
            elif wire in (1, 5):
                pos += 8 if wire == 1 else 4
            else:
                return None
            if field == 0 or pos > len(data):
                return None
    except ValueError:
        return None
    return tag


def _lenient(message_type: Any, tagged: bool = False) -> Any:
    """A request deserializer that hands an Undecodable on instead of raising."""
    name = message_type.DESCRIPTOR.full_name

    def parse(data: bytes) -> Any:
        try:
            return message_type.FromString(data)
        except Exception as exc:  # noqa: BLE001 - DecodeError, or whatever else the parser raises
            problem = str(exc).rpartition(": ")[2] or type(exc).__name__
            return Undecodable(f"{name}: {problem}", _tag_of(data) if tagged else None)

    return parse


def add_to_server(servicer: "RulesServicer", server: Any) -> None:
    """The RulesService on `server`, as rules_pb2_grpc adds it, but with requests that cannot
    be read refused INVALID_ARGUMENT `malformed_request` with a Rejection, as any other
    malformed request is."""
    pb = rules_pb2

    def unary(name: str, request: Any, response: Any) -> Any:
        return grpc.unary_unary_rpc_method_handler(
            servicer.checked(name, response), request_deserializer=_lenient(request),
            response_serializer=response.SerializeToString)

    handlers = {
        "CreateGame": unary("CreateGame", pb.CreateGameRequest, pb.CreateGameResponse),
        "JoinSeat": unary("JoinSeat", pb.JoinSeatRequest, pb.JoinSeatResponse),
        "LeaveSeat": unary("LeaveSeat", pb.LeaveSeatRequest, pb.LeaveSeatResponse),
        "HandleCommand": unary("HandleCommand", pb.HandleCommandRequest, pb.HandleCommandResponse),
        "HandleCommands": grpc.stream_stream_rpc_method_handler(
            servicer.HandleCommands, request_deserializer=_lenient(pb.HandleCommandsRequest, tagged=True),
            response_serializer=pb.HandleCommandsResponse.SerializeToString),
        "ForkGame": unary("ForkGame", pb.ForkGameRequest, pb.ForkGameResponse),
        "ForceEnd": unary("ForceEnd", pb.ForceEndRequest, pb.ForceEndResponse),
        "GetState": unary("GetState", pb.GetStateRequest, pb.GetStateResponse),
        "ListLegalActions": unary("ListLegalActions", pb.ListLegalActionsRequest, pb.ListLegalActionsResponse),
    }
    missing = set(pb.DESCRIPTOR.services_by_name["RulesService"].methods_by_name) - set(handlers)
    assert not missing, f"RulesService methods without a handler: {missing}"
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE_NAME, handlers),))
    server.add_registered_method_handlers(SERVICE_NAME, handlers)


def _check_game_type(game_type: str, hosted: str) -> None:
    """A game type other than the one hosted here is refused, its name clipped in the answer
    (and one longer than any game type's, first, as malformed)."""
    if not game_type or game_type == hosted:
        return
    if len(game_type) > MAX_GAME_TYPE:
        raise Rejection("invalid_game_type", f"game_type is at most {MAX_GAME_TYPE} characters", "malformed")
    if not game_type.isprintable():
        # No game's name: not echoed into the answer (a NUL, a terminal escape) either.
        raise Rejection("invalid_game_type", "game_type must be printable characters", "malformed")
    raise Rejection("wrong_game_type", f"this service hosts {hosted}, not {clip(game_type)}", NOT_FOUND)


def _check_command_id(command_id: str) -> None:
    _check_id("command_id", command_id)
    if command_id.startswith(TIMER_ID_PREFIXES):
        raise Rejection("reserved_command_id", f"a command_id may not start with {' or '.join(TIMER_ID_PREFIXES)}: "
                        "those are the table timers' own", "malformed")


def _check_text(name: str, value: str) -> None:
    """A caller's text the log keeps and replays, views and operators' screens show (a
    player's name, a seat's entropy, a ForceEnd's reason): printable, as the
    gateway requires it, since operators call this service directly too."""
    if not value.isprintable():
        raise Rejection(f"invalid_{name}", f"{name} must be printable characters (no control characters)", "malformed")


def _check_id(name: str, value: str) -> str:
    if not value or len(value) > MAX_ID or not value.isprintable():
        raise Rejection(f"invalid_{name}", f"{name} must be 1..{MAX_ID} printable characters", "malformed")
    return value


class RulesServicer(rules_pb2_grpc.RulesServiceServicer):
    def __init__(self, settings: RulesSettings, replica: Replica, host: TableHost, metrics: RulesMetrics,
                 owners: Any):
        self.s = settings
        self.replica = replica
        self.host = host
        self.metrics = metrics
        self.owners = owners  # callable partition -> advertised address or ""
        self._accepted: dict[str, tuple[Any, Any]] = {}
        # A debug line per accepted command only at CROUPIER_LOG_LEVEL=debug: decided once, so
        # the hot path does not build a log call that the level filters out anyway.
        self._debug = LogSettings.from_env().level == "debug"
        self._streams: set[asyncio.Task] = set()  # the readers of the open HandleCommands streams
        # Reads of the log for finished games and forks' origins: their own threads, and a count
        # of those running that drops only when a read ends, not when its caller gives up (a
        # cancelled call's read goes on on its thread).
        self._log_readers = ThreadPoolExecutor(max_workers=MAX_LOG_READS, thread_name_prefix="log-read")
        self._log_reading = 0

    # -- plumbing -----------------------------------------------------------------------

    async def _abort(self, context, rejection: Rejection, owner: str = "") -> None:
        self.metrics.rejections.labels(self.s.game, rejection.code).inc()
        context.set_trailing_metadata(trailing(rejection, owner))
        await context.abort(KIND_TO_STATUS.get(rejection.kind, grpc.StatusCode.UNKNOWN), bounded(rejection.message))

    def _owner_address(self, rejection: Rejection, game_id: str) -> str:
        """The owner a NOT_OWNER answer names; "" for every other answer. A NOT_OWNER comes
        only after the game id was checked, so an id of any length never reaches the hash."""
        if rejection.kind != NOT_OWNER or not game_id or len(game_id) > MAX_ID:
            return ""
        owner = self.owners(partition_for(game_id, self.replica.partitions))
        # The table as last read may still name this replica just after it gave the partition
        # up: naming itself would send the caller straight back here.
        return "" if owner and owner == getattr(self.owners, "advertise", None) else owner

    def _owner(self, game_type: str, game_id: str):
        _check_game_type(game_type, self.s.game)
        _check_id("game_id", game_id)
        partition = partition_for(game_id, self.replica.partitions)
        owner = self.replica.owner_of(partition)
        if owner is None:
            raise Rejection("not_owner", f"game {game_id} (partition {partition}) is owned by another replica", NOT_OWNER)
        if owner.status == LOST:
            # Revoked or fenced, a reconcile to come: moved, as its owner's submit says, so
            # the gateway looks the partition's owner up again rather than waiting here.
            raise Rejection("not_owner", f"partition {partition} was given up by this replica", NOT_OWNER)
        if owner.status != READY:
            raise Rejection("unavailable", f"partition {partition} is {owner.status}; retry shortly", UNAVAILABLE)
        return owner, partition

    async def _write(self, rpc: str, context, game_type: str, game_id: str, command_id: str, *,
                     command=None, create=None, fork=None, expected_version=None,
                     texts: tuple[tuple[str, str], ...] = ()) -> rules_pb2.CommandResult | None:
        started = time.perf_counter()
        try:
            _check_command_id(command_id)
            for name, value in texts:
                _check_text(name, value)
            owner, partition = self._owner(game_type, game_id)
            future = asyncio.get_running_loop().create_future()
            owner.submit(Pending(game_id, command, command_id, expected_version, future, create=create, fork=fork))
            try:
                # asyncio.timeout, not wait_for: no extra Task per command (3.11's wait_for makes one).
                async with asyncio.timeout(COMMAND_TIMEOUT_S):
                    outcome: Outcome = await future
            except TimeoutError:
                raise Rejection("unavailable", "the event store did not answer in time; retry the same command_id", UNAVAILABLE) from None
        except Rejection as exc:
            self.metrics.commands.labels(self.s.game, rpc, exc.kind).inc()
            log.info("command_rejected", game_id=clip(game_id, MAX_ID), command_id=clip(command_id, MAX_ID),
                     seat=getattr(command, "seat", None),
                     rpc=rpc, code=exc.code, kind=exc.kind)
            owner_addr = self._owner_address(exc, game_id)
            if context is None:
                self.metrics.rejections.labels(self.s.game, exc.code).inc()
                raise Refusal(exc, owner_addr) from None
            await self._abort(context, exc, owner_addr)
            return None
        # Labelled children are looked up once per rpc: .labels() takes a lock and builds a key.
        accepted, latency = self._accepted.get(rpc) or self._accepted.setdefault(
            rpc, (self.metrics.commands.labels(self.s.game, rpc, "accepted"), self.metrics.latency.labels(self.s.game, rpc)))
        accepted.inc()
        latency.observe(time.perf_counter() - started)
        if self._debug:
            log.debug("command_accepted", game_id=game_id, command_id=command_id, seat=getattr(command, "seat", None), rpc=rpc,
                      seq=outcome.last_seq, duplicate=outcome.duplicate)
        return rules_pb2.CommandResult(
            game_id=outcome.game_id, first_seq=outcome.first_seq, last_seq=outcome.last_seq,
            version=outcome.version, duplicate=outcome.duplicate, event_types=list(outcome.event_types),
        )

    def _seed_hash(self, game_id: str) -> str:
        """The seed hash of a game just created or forked here, for its answer ("" if memory no
        longer holds it). Not through _owner: the command has committed, and a partition
        revoked or recovering since must not turn its answer into an error (UNKNOWN)."""
        owner = self.replica.owner_of(partition_for(game_id, self.replica.partitions))
        slot = owner.games.get(game_id) if owner is not None else None
        return slot.state.seed_hash if slot is not None else ""

    def checked(self, name: str, response_type: Any) -> Any:
        """The unary RPC `name`, refusing a request that could not be read (Undecodable)."""
        method = getattr(self, name)

        async def handle(request, context):
            if isinstance(request, Undecodable):
                rejection = request.rejection()
                self.metrics.commands.labels(self.s.game, name, rejection.kind).inc()
                log.info("request_unreadable", rpc=name, error=clip(request.error, 200))
                await self._abort(context, rejection)
                return response_type()
            return await method(request, context)

        return handle

    # -- RPCs ---------------------------------------------------------------------------

    async def CreateGame(self, request, context):
        options = dict(request.options)
        result = await self._write("CreateGame", context, request.game_type, request.game_id, request.command_id,
                                   create={"seats": int(request.seats), "options": options,
                                           "seed": secrets.token_hex(32)})
        if result is None:
            return rules_pb2.CreateGameResponse()
        return rules_pb2.CreateGameResponse(result=result, seed_hash=self._seed_hash(request.game_id))

    async def ForkGame(self, request, context):
        try:
            # Everything that can be checked before the origin's log is read: the ids, and that
            # this replica owns the fork's partition.
            _check_game_type(request.game_type, self.s.game)
            _check_id("origin_game_id", request.origin_game_id)
            _check_command_id(request.command_id)
            owner, _ = self._owner(request.game_type, request.game_id)
            seed = secrets.token_hex(32)

            def read_and_prepare():
                # On a worker thread: the origin's log, and the fork made of it (a fold of
                # every origin event and a record as large; see PreparedFork).
                origin = read_game(self.s.kafka, request.origin_game_id, [self.s.game])
                if not origin:
                    raise Rejection("no_such_game", f"no game {request.origin_game_id}", NOT_FOUND)
                last = max(env.seq for env in origin)
                if not 1 <= request.at_seq <= last:
                    raise Rejection("bad_seq", f"at_seq must be 1..{last}", "malformed")
                # The log as every reader folds it (a record at a seq already folded passed
                # over; a seq missing before at_seq is log_gap): the game its players saw.
                origin = list(folded([env for env in origin if env.seq <= request.at_seq]))
                try:
                    return owner.prepare_fork(request.game_id, origin, seed, request.command_id,
                                              deal=DEAL_KEPT if request.keep_cards else DEAL_AGAIN)
                except Rejection:
                    raise
                except Exception as exc:
                    # The rules failed on this origin (a bug it found): refused as the partition
                    # refuses such a command (its decide_failed), not as a read to retry.
                    log.exception("fork_failed", game_id=request.game_id, origin_game_id=request.origin_game_id)
                    raise Rejection("command_not_understood",
                                    f"this fork could not be made ({type(exc).__name__}); nothing was recorded",
                                    "malformed") from None

            prepared = await self._read_log("the origin", read_and_prepare)
        except Rejection as exc:
            self.metrics.commands.labels(self.s.game, "ForkGame", exc.kind).inc()
            await self._abort(context, exc, self._owner_address(exc, request.game_id))
            return rules_pb2.ForkGameResponse()
        result = await self._write("ForkGame", context, request.game_type, request.game_id, request.command_id,
                                   fork=prepared)
        if result is None:
            return rules_pb2.ForkGameResponse()
        return rules_pb2.ForkGameResponse(result=result, seed_hash=self._seed_hash(request.game_id))

    async def JoinSeat(self, request, context):
        cmd = JoinSeat(seat=request.seat, player=request.player, bot=request.bot or None, entropy=request.entropy)
        result = await self._write("JoinSeat", context, request.game_type, request.game_id, request.command_id, command=cmd,
                                   texts=(("player", request.player), ("entropy", request.entropy)))
        return rules_pb2.JoinSeatResponse(result=result) if result else rules_pb2.JoinSeatResponse()

    async def LeaveSeat(self, request, context):
        cmd = LeaveSeat(seat=request.seat)
        # As a move's: a stale version is refused, a command_id seen before answered whatever it.
        expected = request.expected_version if request.HasField("expected_version") else None
        result = await self._write("LeaveSeat", context, request.game_type, request.game_id, request.command_id,
                                   command=cmd, expected_version=expected)
        return rules_pb2.LeaveSeatResponse(result=result) if result else rules_pb2.LeaveSeatResponse()

    async def ForceEnd(self, request, context):
        if len(request.reason) > MAX_REASON:
            await self._abort(context, Rejection(
                "invalid_reason", f"a reason is at most {MAX_REASON} characters, not {len(request.reason):,}", "malformed"))
            return rules_pb2.ForceEndResponse()
        cmd = ForceEnd(reason=request.reason)
        result = await self._write("ForceEnd", context, request.game_type, request.game_id, request.command_id, command=cmd,
                                   texts=(("reason", request.reason),))
        return rules_pb2.ForceEndResponse(result=result) if result else rules_pb2.ForceEndResponse()

    async def HandleCommand(self, request, context):
        return await self._command(request, context)

    async def HandleCommands(self, request_iterator, context):
        """Many moves on one stream, each answered by tag as soon as it is done
        (croupier.tagged.answer_each: a Task per move, so the moves of different games run
        side by side as they would on separate calls)."""
        try:
            async for response in answer_each(self._readable(request_iterator), self._tagged_command,
                                              readers=self._streams):
                yield response
        except Refusal as refusal:  # a request without a tag to answer it by: the stream ends with it
            await self._abort(context, refusal.rejection)

    async def _readable(self, requests):
        """The stream's requests; one that cannot be read is refused alone (by its tag) when its
        tag can be read, and ends the stream (INVALID_ARGUMENT, its Rejection) when not."""
        async for request in requests:
            if isinstance(request, Undecodable):
                log.info("request_unreadable", rpc="HandleCommands", error=clip(request.error, 200), tag=request.tag)
                self.metrics.commands.labels(self.s.game, "HandleCommand", "malformed").inc()
                if request.tag is None:
                    raise Refusal(request.rejection())
            yield request

    async def _tagged_command(self, message) -> rules_pb2.HandleCommandsResponse:
        if isinstance(message, Undecodable):
            rejection = message.rejection()
            self.metrics.rejections.labels(self.s.game, rejection.code).inc()
            return rules_pb2.HandleCommandsResponse(tag=message.tag, rejection=to_proto(rejection))
        try:
            return rules_pb2.HandleCommandsResponse(tag=message.tag, response=await self._command(message.command, None))
        except Refusal as refusal:
            return rules_pb2.HandleCommandsResponse(tag=message.tag, rejection=to_proto(refusal.rejection, refusal.owner))
        except Exception:  # a bug must still answer its move, as a unary call would (UNKNOWN)
            log.exception("command_failed", game_id=clip(message.command.game_id, MAX_ID),
                          command_id=clip(message.command.command_id, MAX_ID),
                          seat=message.command.seat)
            return rules_pb2.HandleCommandsResponse(tag=message.tag, rejection=to_proto(
                Rejection("internal_error", "the rules service failed on this command; retry it", UNAVAILABLE)))

    def close_streams(self) -> None:
        """Stop reading every open HandleCommands stream: each ends (OK) once the moves it
        has taken are answered, so a shutting-down server has no call left open."""
        for reader in list(self._streams):
            reader.cancel()

    async def _command(self, request, context) -> rules_pb2.HandleCommandResponse:
        """A move: with a context (unary) a refusal aborts the call; without one (a stream)
        it raises Refusal."""
        try:
            # First: a move of another game type (sent to the wrong service) is that, not a
            # malformed move of this one.
            _check_game_type(request.game_type, self.s.game)
            if len(request.action_json) > MAX_ACTION_JSON:
                raise Rejection("action_too_large", f"an action is at most {MAX_ACTION_JSON} bytes", "malformed")
            try:
                # orjson: JSON as its standard says (no NaN or Infinity, no number that
                # overflows to one) and nested at most 1,024 deep; the engine never stores a
                # value its canonical JSON could not write.
                wire = loads(request.action_json)
            except ValueError as exc:
                raise Rejection("malformed_json", f"action_json is not JSON: {exc}", "malformed") from None
            if not isinstance(wire, dict):
                raise Rejection("malformed_command", "an action is a JSON object with a 'type'", "malformed")
            command = self.host.decode_action(wire, request.seat)
        except Rejection as exc:
            self.metrics.commands.labels(self.s.game, "HandleCommand", exc.kind).inc()
            log.info("command_rejected", game_id=clip(request.game_id, MAX_ID), command_id=clip(request.command_id, MAX_ID),
                     seat=request.seat,
                     rpc="HandleCommand", code=exc.code, kind=exc.kind)
            if context is None:
                self.metrics.rejections.labels(self.s.game, exc.code).inc()
                raise Refusal(exc) from None
            await self._abort(context, exc)
            return rules_pb2.HandleCommandResponse()
        expected = request.expected_version if request.HasField("expected_version") else None
        result = await self._write("HandleCommand", context, request.game_type, request.game_id, request.command_id,
                                   command=command, expected_version=expected)
        if result is None:
            return rules_pb2.HandleCommandResponse()
        response = rules_pb2.HandleCommandResponse(result=result)
        if request.want_next:
            owner = self.replica.owner_of(partition_for(request.game_id, self.replica.partitions))
            slot = owner.games.get(request.game_id) if owner else None
            if slot is None and owner is not None and request.game_id in owner.retired:
                response.over = True  # a retry answered for a finished, retired game
            elif slot is not None:
                state = slot.state
                response.over = state.status == "over"
                if state.status == "running":
                    for seat in self.host.to_act(state):  # by the table's own rules version
                        actions = self.host.legal_action_texts(state, seat)
                        response.next.append(rules_pb2.SeatActions(seat=seat, actions_json=actions))
        return response

    async def _read_log(self, what: str, read: Any) -> Any:
        """`read()` on a worker thread (a read of the log and what is made of it), at most
        MAX_LOG_READS at once; beyond them, or if the log cannot be read, a retryable refusal."""
        if self._log_reading >= MAX_LOG_READS:
            raise Rejection("log_reads_busy", f"{MAX_LOG_READS} reads of the log are under way on this replica; "
                            "retry in a second", UNAVAILABLE)
        self._log_reading += 1
        future = asyncio.get_running_loop().run_in_executor(self._log_readers, read)

        def ended(f: asyncio.Future) -> None:
            self._log_reading -= 1
            if not f.cancelled():
                f.exception()  # retrieved: a read whose caller gave up may fail unseen

        future.add_done_callback(ended)
        try:
            return await asyncio.shield(future)
        except Rejection:
            raise
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            raise Rejection(UNAVAILABLE, f"reading {what} from the log failed: {exc}", UNAVAILABLE) from None

    async def _state(self, game_type: str, game_id: str):
        owner, _ = self._owner(game_type, game_id)
        slot = owner.games.get(game_id)
        if slot is not None:
            return slot.state
        if game_id in owner.unreadable:
            raise unreadable(game_id, owner.unreadable[game_id])
        if game_id in owner.retired or game_id in owner.forgotten:
            # A finished game retired from memory (or forgotten): its state is the fold of its
            # log, read and folded on a worker thread (the fold was ~0.4 s of the event loop).
            state = await self._read_log("the finished game", lambda: self.host.fold(
                read_game(self.s.kafka, game_id, [self.s.game])))
            if state is not None:
                return state
        raise Rejection("no_such_game", f"no game {game_id}", NOT_FOUND)

    async def GetState(self, request, context):
        try:
            state = await self._state(request.game_type, request.game_id)
            seat = request.seat if request.HasField("seat") else None
            if seat is not None and not 0 <= seat < state.seats:
                raise Rejection("no_such_seat", f"seat {seat} is not at this table", "malformed")
            view = self.host.view(state, seat)
        except Rejection as exc:
            await self._abort(context, exc, self._owner_address(exc, request.game_id))
            return rules_pb2.GetStateResponse()
        return rules_pb2.GetStateResponse(view_json=canonical_json(view), version=state.version)

    async def ListLegalActions(self, request, context):
        try:
            state = await self._state(request.game_type, request.game_id)
            if not 0 <= request.seat < state.seats:
                raise Rejection("no_such_seat", f"seat {request.seat} is not at this table", "malformed")
            actions = self.host.legal_action_texts(state, request.seat)
        except Rejection as exc:
            await self._abort(context, exc, self._owner_address(exc, request.game_id))
            return rules_pb2.ListLegalActionsResponse()
        return rules_pb2.ListLegalActionsResponse(actions_json=actions, version=state.version)


async def serve(settings: RulesSettings, ready: asyncio.Event | None = None) -> None:
    spec = registry.get(settings.game)
    host = TableHost(spec)
    topic = settings.kafka.topic(settings.game)
    loop = asyncio.get_running_loop()
    partitions = await loop.run_in_executor(None, ensure_topic, settings.kafka, topic)
    metrics = RulesMetrics(settings.game)
    if settings.metrics_port:
        try:
            metrics.serve(settings.metrics_port, settings.host)
        except OSError as exc:  # a port taken: said as the gRPC port's is, not as a traceback
            raise ListenError(f"cannot serve metrics on {settings.host}:{settings.metrics_port} "
                              f"(CROUPIER_RULES_METRICS_PORT): {exc.strerror or exc}") from None

    server = grpc.aio.server(options=[("grpc.max_receive_message_length", 1024 * 1024), *GRPC_SERVER_OPTIONS])
    address = f"{settings.host}:{settings.port}"
    port = listen(server, address)
    advertise = settings.advertise or f"{settings.host}:{port}"
    rds = redis.Redis.from_url(settings.redis_url, socket_timeout=2)
    # The owners' table: written and read on threads of its own, never on the loop (owners.py).
    # Without Redis the replica serves on, rebuilding its games from Kafka; keep_published
    # writes the table within OWNERS_REFRESH_S of Redis answering.
    owners = OwnersTable(rds, settings.key_prefix, settings.game, advertise, partitions)
    owners.publish_partitions()
    owners.refresh()

    # Snapshots have a client of their own: a big one takes longer than the 2 s the owners'
    # table allows a call.
    snap_rds = redis.Redis.from_url(settings.redis_url, socket_timeout=30) if settings.snapshot_every else None
    snapshots = SnapshotStore(snap_rds, settings.key_prefix) if snap_rds is not None else None
    replica = Replica(settings, host, topic, partitions, publish=owners.publish, metrics=metrics, snapshots=snapshots)
    servicer = RulesServicer(settings, replica, host, metrics, owners)
    add_to_server(servicer, server)
    health = HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health, server)
    names = (
        SERVICE_NAME,
        health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
        reflection.SERVICE_NAME,
    )
    reflection.enable_server_reflection(names, server)
    await server.start()
    replica.start()
    await health.set("", health_pb2.HealthCheckResponse.SERVING)
    await health.set("croupier.v1.RulesService", health_pb2.HealthCheckResponse.SERVING)
    log.info("rules_serving", game=settings.game, address=advertise, topic=topic, partitions=partitions)
    print(f"croupier rules {settings.game} serving on {advertise}", flush=True)
    if ready is not None:
        ready.set()

    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, stop.set)
        except (NotImplementedError, RuntimeError):
            pass
    refresher = asyncio.create_task(owners.keep_published(replica.ready_partitions))
    await stop.wait()
    refresher.cancel()
    log.info("rules_stopping", game=settings.game)
    await health.enter_graceful_shutdown()
    await replica.close()  # leave the group: partitions move now, not after a timeout
    servicer.close_streams()  # the gateway's open streams end, and it reopens them to the new owners
    await server.stop(grace=2)
    await loop.run_in_executor(None, owners.close)  # the releases of our partitions, if Redis answers
    rds.close()
    if snap_rds is not None:
        snap_rds.close()
