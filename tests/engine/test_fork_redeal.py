"""A fork deals the cards hidden at its step again with its own randomness (GameSpec.redeal,
ForkTable.deal), so that its origin's record, open to everybody once the origin ends (its
replays as any seat, its seed), gives none of the fork's hidden cards away.

At fork points sampled from random games of every game, for every game:
- what a spectator sees of the fork is what it saw of the origin at that step (the public
  position is the same; only hidden cards move);
- the new deal depends on nothing hidden in the origin: the origin with its hidden cards laid
  out otherwise (another fork's deal) is dealt, with the same randomness, into the very same
  game. This is the property that closes the leak: whatever the origin's record shows of its
  hidden cards, the fork's are a function of the public position and the fork's seed;
- the deal moves cards (it is no copy) and every draw is in the fork's log;
- the fork plays on to its end, and its log passes the audit (which deals it again from the
  recorded command and seed)."""

from __future__ import annotations

import random

import pytest

from croupier.engine import registry
from croupier.engine.audit import audit
from croupier.engine.contract import Context, Tick
from croupier.engine.local import LocalTable
from croupier.engine.rng import FairRng
from croupier.engine.table import DEAL_AGAIN, DEAL_KEPT, OVER, RUNNING, TableHost
from croupier.engine.testing import random_steps

GAMES = sorted(registry.GAME_IDS)
SEED_A, SEED_B = "a1" * 32, "b2" * 32


def fork_points(spec, rnd: random.Random, tables: int = 2, every: int = 11, cap: int = 1200, at_least: int = 8):
    """(origin envelopes, time) at sampled steps of random games, each at a whole command:
    from `tables` games, and more (up to 8 in all) while fewer than `at_least` points came."""
    found = 0
    for g in range(8):
        if g >= tables and found >= at_least:
            return
        seats = min(spec.max_seats, max(2, spec.min_seats) + g)
        table = LocalTable(spec, f"origin-{g}", seats, None, f"{g + 3:02x}" * 32)
        table.join_all()
        for step, (_, now) in enumerate(random_steps(table, rnd, cap), 1):
            if step % every == 0:
                found += 1
                yield list(table.envelopes), now


def play_out(host: TableHost, envelopes: list, now: int, rnd: random.Random, cap: int = 3000) -> list:
    """The fork played by random seats to its end (or `cap` steps)."""
    spec = host.spec
    state = host.fold(envelopes)
    log = list(envelopes)
    for _ in range(cap):
        if state.status != RUNNING:
            break
        now += 1000
        due, to_act = host.deadline(state), host.to_act(state)
        if due is not None and (now >= due or not to_act):
            now = max(now, due)
            command = Tick(now=now)
        else:
            seat = rnd.choice(list(to_act))
            command = rnd.choice(spec.for_version(state.rules_version).legal_actions(state.game, seat))
        new = host.decide(state, command, now=now)
        log += new
        state = host.fold(new, state)
    return log


def deal(spec, game, fork, now: int):
    """`game` dealt by the game's redeal with the draws `fork` (a TableState) made first."""
    for event in spec.redeal(game, Context(rng=FairRng(fork.seed, fork.entropy, 0), now=now)):
        game = spec.evolve(game, event)
    return game


@pytest.mark.parametrize("game_id", GAMES)
def test_a_fork_deals_its_hidden_cards_again_from_the_public_position_alone(game_id):
    spec = registry.get(game_id)
    host = TableHost(spec)
    assert spec.redeal is not None, f"{game_id} has no redeal: its forks would keep the origin's hidden cards"
    rnd = random.Random(f"redeal:{game_id}")
    points = moved = 0
    for origin, now in fork_points(spec, rnd):
        points += 1
        at = origin[-1].seq
        kept = host.fold(host.fork("kept", origin, SEED_A, now=now, deal=DEAL_KEPT))
        envs = host.fork("fork-a", origin, SEED_A, now=now)
        fork = host.fold(envs)
        assert envs[0].cause["command"]["deal"] == DEAL_AGAIN
        assert fork.status == RUNNING and fork.version == len(envs)
        # The public position is the origin's.
        assert spec.view(fork.game, None) == spec.view(kept.game, None), f"the deal changed what a spectator sees at {at}"
        assert spec.to_act(fork.game) == spec.to_act(kept.game)
        # Every draw of the deal is the fork's, counted before its first command.
        draws = envs[0].cause["draws"]
        assert fork.rng_counter == len(draws)
        moved += fork.game != kept.game
        # The deal is blind to where the origin had its hidden cards: laid out otherwise (by
        # another fork's deal), the origin is dealt into the same game by the same draws.
        other = host.fold(host.fork("fork-b", origin, SEED_B, now=now)).game
        assert deal(spec, kept.game, fork, now) == fork.game
        from_other = deal(spec, other, fork, now)
        assert from_other == fork.game, (
            f"{game_id} at {at}: the fork's deal depends on where the origin had its hidden cards")
    assert points >= 6, f"only {points} fork points sampled"
    assert moved >= points // 2, f"the deal moved hidden cards at only {moved} of {points} fork points"


@pytest.mark.parametrize("game_id", GAMES)
def test_a_dealt_fork_plays_to_its_end_and_passes_the_audit(game_id):
    spec = registry.get(game_id)
    host = TableHost(spec)
    rnd = random.Random(f"redeal-play:{game_id}")
    ended = 0
    for n, (origin, now) in enumerate(fork_points(spec, rnd, tables=1, every=9)):
        if n >= 3:
            break
        log = play_out(host, host.fork(f"fork-{n}", origin, SEED_A, now=now), now, rnd)
        report = audit(log)
        assert report.ok, (game_id, report.faults[:3])
        ended += host.fold(log).status == OVER
    assert ended >= 1, f"no dealt fork of {game_id} reached its end"
