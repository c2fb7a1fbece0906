"""The state of a delve expedition: small frozen dataclasses, tuples only.

Decks are tuples of card ids (the draw pile's first card is its top). The floor being
explored is its dealt cards plus two flags per slot (face up, cleared); the floors below
are dealt at the start and stay face down until the party descends.
"""

from __future__ import annotations

from dataclasses import dataclass

from croupier.engine.records import replacer, setstate_with_defaults

MAX_HEALTH = 9
HAND_LIMIT = 5

# Stages of the expedition. A decision is pending when `picker`, `support`, `facing` or
# `visit` is set, or in the route and camp stages; the other stages move on at once.
SETUP = "setup"
ROUTE = "route"  # the party chooses (votes for) an uncovered encounter
CHOSEN = "chosen"  # a route was chosen: an encounter round or a market visit begins
LIMIT = "limit"  # after the round's draw: adventurers over the hand limit discard
FACE = "face"  # adventurers face the encounter (or attack the boss) one after another
MARKET = "market"  # adventurers visit a market one after another
ENDED = "ended"  # a round ended: rescue camp, bonus market, descent, next vote
CAMP = "camp"  # conscious adventurers may rescue unconscious teammates
OVER = "over"

# The route vote's option to take the stairs down (rules version 3): once a card of the
# final row has been cleared the party may go down at any route vote, or clear the rest of
# the floor first for its bonus market visit. Not -1: a ballot's -1 is "has not voted".
DESCEND = -2
NO_VOTE = -1  # a ballot's entry for a seat that has not voted


@dataclass(frozen=True, slots=True)
class Player:
    hand: tuple[str, ...] = ()
    draw: tuple[str, ...] = ()
    discard: tuple[str, ...] = ()
    health: int = MAX_HEALTH
    coins: int = 0
    destroyed: int = 0


@dataclass(frozen=True, slots=True)
class Facing:
    """An adventurer facing one encounter card (the route, a switched-to card, an extra
    encounter or the boss)."""

    seat: int
    card: str
    slot: int  # its floor slot; -1 for extra encounters and the boss
    switched: bool = False  # faced by switching: no bribe, no second switch
    extra: bool = False
    committed: tuple[str, ...] = ()  # hand cards committed to the roll
    outcome: str = ""  # "", success, failure, accepted, bribed


@dataclass(frozen=True, slots=True)
class Support:
    """An offered attack: teammates in `queue` may add cards before the roll."""

    attacker: int
    skill: str
    queue: tuple[int, ...]
    cards: tuple[tuple[int, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Picker:
    """A pending choice of cards: `need` of them, chosen one by one, then confirmed."""

    seat: int
    mode: str  # limit, discard, destroy (from the hand); rescue (from draw and discard piles)
    need: int
    chosen: tuple[str, ...] = ()
    target: int = -1  # rescue: the unconscious teammate


@dataclass(frozen=True, slots=True)
class Visit:
    seat: int
    bought: bool = False
    rested: bool = False


@dataclass(frozen=True, slots=True)
class Dungeon:
    """Every floor's cards as dealt (slot order) and the state of the floor being explored."""

    floors: tuple[tuple[str, ...], ...] = ()
    floor: int = 0
    face_up: tuple[bool, ...] = ()
    cleared: tuple[bool, ...] = ()
    # The party goes down now: version 3, every card was cleared; earlier versions, a card
    # of the final row was cleared.
    floor_done: bool = False
    floor_clear: bool = False  # every card was cleared: a bonus market visit first
    bonus_done: bool = False
    cleared_total: int = 0


@dataclass(frozen=True, slots=True)
class Shop:
    market: tuple[str, ...] = ()  # the face-up market row
    stock: tuple[str, ...] = ()  # the rest of the shared market stock, face down
    loot: tuple[str, ...] = ()  # the loot deck, face down
    diamond_found: bool = False


@dataclass(frozen=True, slots=True)
class Boss:
    card: str = ""
    hp: int = 0
    max_hp: int = 0
    engaged: bool = False
    round: int = 0
    damage: int = 0


@dataclass(frozen=True, slots=True)
class Ballot:
    """The route vote."""

    options: tuple[int, ...] = ()
    votes: tuple[int, ...] = ()  # per seat: the slot voted for (or DESCEND), NO_VOTE for none
    session: int = 0
    deadline: int | None = None
    silent: int = 0  # sessions in a row that ended without a vote


@dataclass(frozen=True, slots=True)
class State:
    seats: int
    vote_ms: int
    stage: str = SETUP
    players: tuple[Player, ...] = ()
    dungeon: Dungeon = Dungeon()
    shop: Shop = Shop()
    boss: Boss = Boss()
    ballot: Ballot = Ballot()
    # the round
    route: int = -1
    queue: tuple[int, ...] = ()  # seats still to take their turn, visit, or camp
    facing: Facing | None = None
    support: Support | None = None
    picker: Picker | None = None
    visit: Visit | None = None
    market_kind: str = ""
    faced_route: bool = False
    switched: tuple[int, ...] = ()
    camp_done: bool = False
    rounds: int = 0
    outcome: str = ""  # won, lost
    reason: str = ""
    # The rules version the game is played under, where its rules differ (initial_state
    # sets it; a state pickled before this field reads 2). 3: the stairs (DESCEND), no
    # switch to the final row, the killing blow's reward. 4: a fork restarts a timed vote.
    rules: int = 2
    # The cards of the floors the party has left that were still face down when it went down:
    # nobody has seen them, and no view shows an earlier floor, so only hidden() reads them
    # (a state pickled before this field reads () here).
    unseen_below: tuple[str, ...] = ()

    __setstate__ = setstate_with_defaults


# evolve copies the state for every event: the fast replace of croupier.engine.records
update_state = replacer(State)
update_player = replacer(Player)
update_dungeon = replacer(Dungeon)
update_shop = replacer(Shop)
update_boss = replacer(Boss)
update_ballot = replacer(Ballot)
update_facing = replacer(Facing)
update_support = replacer(Support)
update_picker = replacer(Picker)
update_visit = replacer(Visit)
