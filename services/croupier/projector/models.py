"""Writing one game's read models to Redis, exactly once per seq.

Per game: a meta hash (version, status, players, result...), a views hash (field
"spectator", one field per seat with that seat's view, and "actions:<seat>" with the seat's
legal actions, so the gateway serves every read from Redis), and a pickled state snapshot
that lets a restarted projector go on without re-reading the game.

APPLY runs atomically in Redis: it writes the game's meta, views and state snapshot only if
the stored version is exactly first_seq - 1, so a redelivered or replayed batch changes
nothing (returns 0, or 2 when Redis holds a later version than the batch's), and a batch that
does not continue the stored version is refused (returns -1) so the projector can re-read the
log instead of writing a hole. A fold from the game's first event is whole, so it is written
whenever the game has no stored state and the fold reaches at least the stored version (a meta
left without its state, by an eviction or a hand, would otherwise refuse every fold of the
game for good; an older fold, a projector behind another, never rolls a newer one back). Such
a fold that has not reached the stored version yet gets 3: the projector keeps it and goes on
with it in the next batch (`Flush.whole`, with every join since the first event), since a
fold of the game started again from its stored version has no state to start from.

A finished game's keys expire `finished_ttl_s` after its last event (PEXPIREAT, so a fold
again from the log, after a rebuild or a rewind, does not make old games live for another
whole period), and a sweep (`ReadModels.sweep`) takes them out of the finished and all-games
listings.
"""

from __future__ import annotations

import pickle
import time
from dataclasses import dataclass, field
from typing import Any

import redis
import structlog

from croupier.engine.codec import canonical_json
from croupier.engine.table import OPEN, OVER, RUNNING, TableHost, TableState
from croupier.projector import feed
from croupier.projector.keys import Keys

log = structlog.get_logger("croupier.projector")

APPLY = """
local stored = tonumber(redis.call('HGET', KEYS[1], 'version') or '0')
local first = tonumber(ARGV[1])
local last = tonumber(ARGV[2])
local whole = (first == 1 or ARGV[4] == '1') and redis.call('EXISTS', KEYS[2]) == 0
if whole and last >= stored then
  redis.call('DEL', KEYS[1])
elseif whole then return 3
elseif stored > last then return 2
elseif stored == last then return 0
elseif stored ~= first - 1 then return -1 end
local nmeta = tonumber(ARGV[5])
local i = 6
local meta = {}
for n = 1, nmeta do
  meta[#meta + 1] = ARGV[i]; meta[#meta + 1] = ARGV[i + 1]; i = i + 2
end
redis.call('HSET', KEYS[1], 'version', last, unpack(meta))
local nviews = tonumber(ARGV[i]); i = i + 1
local views = {}
for n = 1, nviews do
  views[#views + 1] = ARGV[i]; views[#views + 1] = ARGV[i + 1]; i = i + 2
end
redis.call('DEL', KEYS[3])
if nviews > 0 then redis.call('HSET', KEYS[3], unpack(views)) end
redis.call('SET', KEYS[2], ARGV[3])
local at = tonumber(ARGV[i])
if at > 0 then
  redis.call('PEXPIREAT', KEYS[1], at); redis.call('PEXPIREAT', KEYS[2], at); redis.call('PEXPIREAT', KEYS[3], at)
end
return 1
"""

# Drop a game's stored state when its meta still has the version it was read at: a state that
# does not match its meta (or cannot be read) makes the next fold start from the game's first
# event, which APPLY then writes whole.
DROP_STATE = """
if redis.call('HGET', KEYS[1], 'version') == ARGV[1] then return redis.call('DEL', KEYS[2]) end
return 0
"""

SWEEP_BATCH = 1000  # finished games one sweep round takes out of the listings
UNVIEWABLE = -2  # apply's answer for a game whose views could not be made (nothing written)


def _wrong_type(answer) -> bool:
    """Whether a pipelined answer is Redis's refusal of a key holding another type."""
    return isinstance(answer, redis.ResponseError) and "WRONGTYPE" in str(answer)


@dataclass
class Flush:
    """One game's new read models, ready to apply."""

    game_id: str
    game_type: str
    first_seq: int
    state: TableState
    joins: dict[int, int] = field(default_factory=dict)  # seat -> seq of its SeatJoined (0: left)
    # A fold from the game's first event (in this batch or an earlier one, whose APPLY answered
    # 3), joins holding every join since: written whole over a meta without its state.
    whole: bool = False


class ReadModels:
    def __init__(self, client: redis.Redis, keys: Keys, finished_ttl_s: int = 0):
        self.r = client
        self.k = keys
        self.ttl = finished_ttl_s
        self._apply = client.register_script(APPLY)
        self._drop_state = client.register_script(DROP_STATE)

    def expires_at(self, state: TableState) -> int:
        """When a game's read models expire (ms since the epoch): finished_ttl_s after the last
        event of a finished game; 0 for a game not over, or with no TTL set."""
        if state.status != OVER or not self.ttl:
            return 0
        return state.last_time + self.ttl * 1000

    def load(self, hosts: dict[str, TableHost], game_ids: list[str]) -> dict[str, TableState]:
        """The stored snapshots of these games (those that have one)."""
        if not game_ids:
            return {}
        # One transaction: the version and the state are read as one APPLY left them.
        pipe = self.r.pipeline(transaction=True)
        for gid in game_ids:
            pipe.hget(self.k.meta(gid), "version")
            pipe.get(self.k.state(gid))
        raw = pipe.execute(raise_on_error=False)
        out = {}
        for i, gid in enumerate(game_ids):
            version, blob = raw[2 * i], raw[2 * i + 1]
            if _wrong_type(version) or _wrong_type(blob):
                # Not what this code writes there (a hand, another program): the game's keys
                # are dropped, and the gap its next record makes folds it again from its start.
                self.drop_game(gid, f"{version if _wrong_type(version) else blob}")
                continue
            if isinstance(version, Exception):
                raise version
            if isinstance(blob, Exception):
                raise blob
            if version is None or blob is None:
                continue
            try:
                state = pickle.loads(blob)
                ok = state.version == int(version)
            except Exception as exc:  # a state this code cannot read: fold the game again
                log.warning("stored_state_unreadable", game_id=gid, error=f"{type(exc).__name__}: {exc}")
                ok = False
            if ok:
                out[gid] = state
            else:
                # Not the state of its meta's version (an eviction, a hand): drop it, so the
                # fold from the game's first event that the gap brings is written whole.
                log.warning("stored_state_dropped", game_id=gid, version=int(version))
                self._drop_state(keys=[self.k.meta(gid), self.k.state(gid)], args=[version])
        return out

    def relist(self, states: dict[str, TableState]) -> None:
        """Write again the listings of games whose stored state was just loaded (a projector
        that starts, or folds again after Redis went away). Apply's guarded write and its
        listings are two round trips: a failure between them left the game's state current
        and its listings behind (an ended game still "running", a new table missing from the
        lobby), and the events that led there, delivered again, are skipped as applied. The
        listings of a stored state are the same whatever wrote them, so writing them again
        is harmless; the feed is not published again."""
        if not states:
            return
        pipe = self.r.pipeline(transaction=False)
        now_ms = int(time.time() * 1000)
        for gid, state in states.items():
            self._queue_listings(pipe, Flush(gid, state.game_type, state.version, state), None, now_ms)
        self._execute_listings(pipe, {state.game_type for state in states.values()})

    def apply(self, flushes: list[Flush], hosts: dict[str, TableHost]) -> list[int]:
        """Apply a batch of games' updates: one round trip for the guarded writes, one for the
        listings of the games that are now current (applied, or applied before). A failure
        between the two round trips is repaired when the game's state is next loaded
        (`relist`). Per game 1 (applied), 0 (applied before), 2 (Redis holds a later version:
        its writer listed it), 3 (a fold from the first event, behind a meta without its state:
        nothing written, the fold goes on), -1 (refused) or UNVIEWABLE (its views could not be
        made: nothing of it written)."""
        pipe = self.r.pipeline(transaction=False)
        messages: list[str | None] = []
        for f in flushes:
            try:
                messages.append(self._queue_apply(pipe, f, hosts[f.game_type]))
            except Exception as exc:  # noqa: BLE001 - a state the game's view cannot show
                # Nothing of it is queued (the script is queued last): the game's read models
                # stay as they were, and the other games of the batch are written.
                log.error("read_model_unviewable", game_id=f.game_id, version=f.state.version,
                          error=f"{type(exc).__name__}: {exc}"[:300])
                messages.append(None)
        answers = iter(pipe.execute(raise_on_error=False)) if len(pipe) else iter(())
        results = []
        for f, m in zip(flushes, messages):
            if m is None:
                results.append(UNVIEWABLE)
                continue
            answer = next(answers)
            if _wrong_type(answer):
                # The game's meta is not a hash: dropped, and refused, so the partition is
                # folded again and the game written whole from its first event.
                self.drop_game(f.game_id, str(answer))
                results.append(-1)
            elif isinstance(answer, Exception):
                raise answer
            else:
                results.append(int(answer))
        pipe = self.r.pipeline(transaction=False)
        now_ms = int(time.time() * 1000)
        touched: set[str] = set()
        for f, result, message in zip(flushes, results, messages):
            if result in (0, 1):
                # Not on 2: the listings of an older state would undo its writer's (a game
                # that ended put back among the running by a projector that lost the race).
                self._queue_listings(pipe, f, message, now_ms)
                touched.add(f.game_type)
        self._execute_listings(pipe, touched)
        return results

    def _execute_listings(self, pipe, game_types) -> None:
        """Run queued listings writes; a listing that is not a sorted set (a hand, another
        program) fails its own writes only: it is dropped and made again from the games' metas."""
        if not len(pipe):
            return
        answers = pipe.execute(raise_on_error=False)
        if not any(isinstance(a, Exception) for a in answers):
            return
        if not any(_wrong_type(a) for a in answers):
            raise next(a for a in answers if isinstance(a, Exception))
        listings = [self.k.all_games()]
        for gtype in game_types:
            listings += [self.k.lobby(gtype), self.k.running(gtype), self.k.finished(gtype)]
        for key in listings:
            kind = self.r.type(key)
            kind = kind.decode() if isinstance(kind, bytes) else kind
            if kind not in ("zset", "none"):
                self.relist_from_metas(key)

    def drop_game(self, gid: str, why: str) -> None:
        log.error("read_model_wrong_type", game_id=gid, error=why[:200], action="dropped, folded again from the log")
        self.r.unlink(self.k.meta(gid), self.k.state(gid), self.k.views(gid))

    def relist_from_metas(self, key: str) -> int:
        """Make one listing again from the metas of the games in Redis (every game of its
        kind, whichever projector folds it); returns how many games it lists."""
        log.error("read_model_wrong_type", key=key, action="dropped, made again from the games' metas")
        wanted = {}
        for meta_key in self.r.scan_iter(match=f"{self.k.p}g:*", count=1000, _type="hash"):
            name = meta_key.decode() if isinstance(meta_key, bytes) else meta_key
            rest = name[len(self.k.p) + 2:]
            if not (rest.startswith("{") and rest.endswith("}")):
                continue  # a game's views hash, not its meta
            gid = rest[1:-1]
            gtype, status, created, updated = (v.decode() if isinstance(v, bytes) else v for v in
                                               self.r.hmget(meta_key, "game_type", "status", "created", "updated"))
            if gtype is None or status is None:
                continue
            try:
                created_ms, updated_ms = int(created or 0), int(updated or 0)
            except ValueError:
                continue
            if key == self.k.all_games():
                wanted[f"{gtype}:{gid}"] = created_ms
            elif key == self.k.lobby(gtype) and status == OPEN:
                wanted[gid] = created_ms
            elif key == self.k.running(gtype) and status == RUNNING:
                wanted[gid] = updated_ms
            elif key == self.k.finished(gtype) and status == OVER:
                wanted[gid] = updated_ms
        pipe = self.r.pipeline(transaction=True)
        pipe.unlink(key)
        if wanted:
            pipe.zadd(key, wanted)
        pipe.execute()
        return len(wanted)

    def _queue_apply(self, pipe, f: Flush, host: TableHost) -> str:
        """Queue the game's guarded write; returns its feed message (published once applied)."""
        state = f.state
        k = self.k
        meta = {
            "game_type": f.game_type,
            "status": state.status,
            "seats": state.seats,
            "players": canonical_json([None if p is None else dict(p) for p in state.players]),
            "free_seats": sum(p is None for p in state.players),
            "result": canonical_json(state.result) if state.result is not None else "",
            "end_reason": state.end_reason or "",
            "seed_hash": state.seed_hash,
            "options": canonical_json(state.options),
            "created": f.state.created,
            "updated": state.last_time,
            # A fork's origin ({game_id, seq, hash}): the gateway gives operators seat tokens
            # for forks only (their seats are filled from the origin and nobody joined them).
            "origin": canonical_json(state.origin) if state.origin else "",
        }
        # Which join holds each seat (the gateway's check of a seat token when its own
        # record of seat holders is gone): kept from earlier batches, written when it changes.
        for seat, seq in f.joins.items():
            meta[f"joined:{seat}"] = seq
        views = {"spectator": canonical_json(host.view(state, None))}
        for seat in range(state.seats):
            views[str(seat)] = canonical_json(host.view(state, seat))
            views[f"actions:{seat}"] = host.legal_actions_json(state, seat)
        args: list[Any] = [f.first_seq, state.version, pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL),
                           "1" if f.whole else "0", len(meta)]
        for key, value in meta.items():
            args.extend((key, value))
        args.append(len(views))
        for key, value in views.items():
            args.extend((key, value))
        args.append(self.expires_at(state))
        self._apply(keys=[k.meta(f.game_id), k.state(f.game_id), k.views(f.game_id)], args=args, client=pipe)
        if f.joins:  # a seat changed hands: the gateways check their streams' tokens (feed.py)
            views = {**views, **{f"joined:{seat}": str(seq) for seat, seq in f.joins.items()}}
        return feed.encode(state.version, state.status, views)

    def _queue_listings(self, pipe, f: Flush, message: str | None, now_ms: int) -> None:
        state, k, gid, gtype = f.state, self.k, f.game_id, f.game_type
        expires = self.expires_at(state)
        if expires and expires <= now_ms:
            # Its keys expired as APPLY wrote them (a finished game folded again after its
            # time), or were written without an expiry by an earlier version: gone, in no
            # listing, and nobody follows its feed.
            pipe.unlink(k.meta(gid), k.state(gid), k.views(gid))
            pipe.zrem(k.lobby(gtype), gid)
            pipe.zrem(k.running(gtype), gid)
            pipe.zrem(k.finished(gtype), gid)
            pipe.zrem(k.all_games(), f"{gtype}:{gid}")
            return
        if state.status == OPEN:
            pipe.zadd(k.lobby(gtype), {gid: f.state.created})
        else:
            pipe.zrem(k.lobby(gtype), gid)
        if state.status == RUNNING:
            pipe.zadd(k.running(gtype), {gid: state.last_time})
        elif state.status == OVER:
            pipe.zrem(k.running(gtype), gid)
            pipe.zadd(k.finished(gtype), {gid: state.last_time})
        pipe.zadd(k.all_games(), {f"{gtype}:{gid}": f.state.created})
        # After the write (the previous round trip): a gateway that reads on hearing it finds
        # at least this version. The message carries the views themselves (feed.py).
        if message is not None:
            pipe.publish(k.feed(gid), message)

    def sweep(self, game_types: list[str], now_ms: int, *, rounds: int = 10) -> int:
        """Take finished games whose read models have expired out of the finished and
        all-games listings, their keys with them; returns how many. At most
        rounds × SWEEP_BATCH games a call, so a sweep never holds the projector long; what is
        left goes at the next. Several projectors may sweep at once: ZREM is idempotent."""
        if not self.ttl:
            return 0
        cutoff = now_ms - self.ttl * 1000
        swept = 0
        for gtype in game_types:
            for _ in range(rounds):
                ids = [m.decode() if isinstance(m, bytes) else m for m in
                       self.r.zrangebyscore(self.k.finished(gtype), "-inf", cutoff, start=0, num=SWEEP_BATCH)]
                if not ids:
                    break
                pipe = self.r.pipeline(transaction=False)
                pipe.zrem(self.k.finished(gtype), *ids)
                pipe.zrem(self.k.all_games(), *(f"{gtype}:{gid}" for gid in ids))
                # Their keys expire by themselves, but not those an earlier version wrote with
                # no expiry (finished games kept for good): they go with their listings.
                pipe.unlink(*(key for gid in ids for key in (self.k.meta(gid), self.k.state(gid), self.k.views(gid))))
                pipe.execute()
                swept += len(ids)
                if len(ids) < SWEEP_BATCH:
                    break
        return swept
