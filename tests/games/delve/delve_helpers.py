"""Shared set-ups for the delve tests: a known deal, and a way to play commands onto it.

Starting decks are in a known order (top first): punch x2, sidestep x2, prayer x2, spark x2,
so the opening hand is punch 1-2, sidestep 1-2, prayer 1 and the first draw is prayer 2.
"""

from __future__ import annotations

from collections.abc import Sequence

from croupier.engine.contract import Command, Context, Event
from croupier.engine.testing import ScriptedRng
from croupier.games.delve import SPEC
from croupier.games.delve import events as E
from croupier.games.delve.cards import CONTENT

# Floor 0 (The Upper Halls): slots 0 1 2 | 3 (under 0,1) 4 (under 2) | 5 (under 3) 6 (under 4, final row 5 6)
F0 = (
    "enc:goblin-scouts", "enc:giant-rats", "enc:treasure-chest",
    "enc:skeleton-guard", "enc:wandering-merchant",
    "enc:rusted-door", "enc:cave-spiders",
)
# Floor 1 (The Fungal Caverns): 0 1 2 | 3 (under 0) 4 (under 1,2) | 5 (under 3) 6 (under 3,4) | 7 (under 5) 8 (under 6)
F1 = (
    "enc:orc-raiders", "enc:iron-door", "enc:fungal-grove",
    "enc:troll-bridge", "enc:cursed-altar",
    "enc:dark-elf-patrol", "enc:fungal-bazaar",
    "enc:wolf-den", "enc:goblin-shaman",
)
# Floor 2 (The Sunken Vaults): 0 1 2 | 3 (under 0,1) 4 (under 2) | 5 (under 3) 6 (under 4) | 7 (under 5) 8 (under 5,6)
F2 = (
    "enc:minotaur", "enc:lich-acolytes", "enc:crystal-golem",
    "enc:basilisk", "enc:sunken-trader",
    "enc:drowned-knight", "enc:vampire-bats",
    "enc:dragon-hoard", "enc:vault-door",
)
MARKET = ("iron-sword.1", "rapier.1", "holy-symbol.1", "fire-scroll.1", "lucky-coin.1")
STOCK = ("spellbook.1", "war-hammer.1", "smoke-bomb.1")
LOOT = ("gold-idol.1", "elven-bow.1", "crystal-orb.1", "luck-stone.1")
BOSS = "boss:goblin-king"


def deck(seat: int) -> tuple[str, ...]:
    return CONTENT.starting_cards(seat)


def started(
    seats: int = 1,
    *,
    decks: Sequence[Sequence[str]] | None = None,
    floors: tuple = (F0, F1, F2),
    boss: str = BOSS,
    boss_hp: int | None = None,
    market: tuple = MARKET,
    stock: tuple = STOCK,
    loot: tuple = LOOT,
    hand: int = 5,
) -> list[Event]:
    """The events of a Start with this deal, up to (not including) the first vote."""
    decks = tuple(tuple(d) for d in (decks or [deck(s) for s in range(seats)]))
    hp = boss_hp if boss_hp is not None else CONTENT.encounters[boss].hp[seats - 1]
    out: list[Event] = [E.ExpeditionStarted(
        boss=boss, boss_hp=hp, floors=floors, market=market, stock=stock, loot=loot, decks=decks,
    )]
    for s in range(seats):
        if hand:
            out.append(E.CardsDrawn(seat=s, cards=decks[s][:hand]))
    return out


def vote_opened(seats: int = 1, options: tuple = (0, 1, 2), deadline: int | None = None) -> E.VoteOpened:
    return E.VoteOpened(session=1, options=options, deadline=deadline if seats > 1 else None)


def state_of(seats: int, events: Sequence[Event], options: dict | None = None):
    st = SPEC.initial_state(SPEC.parse_options(options), seats)
    for e in events:
        st = SPEC.evolve(st, e)
    return st


def new(seats: int = 1, options: dict | None = None, deadline: int = 30000, **deal) -> object:
    """A fresh expedition at its first route vote."""
    return state_of(seats, [*started(seats, **deal), vote_opened(seats, deadline=deadline)], options)


def run(st, cmd: Command, outcomes: Sequence = (), now: int = 0):
    """decide + evolve one command with scripted randomness: (new state, events)."""
    events = SPEC.decide(cmd, st, Context(rng=ScriptedRng(outcomes), now=now))
    for e in events:
        st = SPEC.evolve(st, e)
    return st, events


def of_type(events: Sequence[Event], cls: type) -> list:
    return [e for e in events if isinstance(e, cls)]


def to_turn(st, slot: int, now: int = 0):
    """Every conscious seat votes for `slot`; each adventurer over the hand limit discards
    the card just drawn. Returns the state at the first adventurer's turn."""
    from croupier.games.delve import commands as C

    for seat in SPEC.to_act(st):
        st, _ = run(st, C.Vote(seat=seat, slot=slot), now=now)
    while st.picker is not None and st.picker.mode == "limit":
        pk = st.picker
        for card in st.players[pk.seat].hand[-pk.need:]:
            st, _ = run(st, C.PickCard(seat=pk.seat, card=card))
        st, _ = run(st, C.ConfirmPick(seat=pk.seat))
    return st


def floor0(**at: str) -> tuple:
    """Floor 0 with other encounters put in some slots, e.g. floor0(s0="enc:cave-spiders")."""
    cards = list(F0)
    for key, card in at.items():
        slot = int(key[1:])
        if card in cards:
            cards[cards.index(card)] = cards[slot]
        cards[slot] = card
    return tuple(cards)


def facing(seats=1, slot=0, events=(), **deal):
    """The state when seat 0 faces the encounter in `slot` of the first floor."""
    st = new(seats, **deal)
    for e in events:
        st = SPEC.evolve(st, e)
    return to_turn(st, slot)


def market_first(seats=1, coins=0):
    extra = [E.CoinsGained(seat=s, amount=coins) for s in range(seats)] if coins else []
    st = new(seats, floors=(floor0(s0="enc:wandering-merchant"), F1, F2))
    for e in extra:
        st = SPEC.evolve(st, e)
    return st


def at_boss(seats=1, hp=2, health=None):
    pre = [*started(seats, boss_hp=hp), E.BossEngaged(boss=BOSS, hp=hp), E.BossRoundStarted(round=1, order=tuple(range(seats))),
           E.TurnStarted(seat=0, card=BOSS, slot=-1)]
    if health is not None:
        pre.append(E.DamageTaken(seat=0, amount=9 - health, health=health))
    return state_of(seats, pre)
