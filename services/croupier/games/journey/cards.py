"""The deck of the journey, loaded from content/cards.yaml and validated on load.

A card id is its rank followed by its suit letter ("QH", "10S", "AD"); the Joker is "JOKER".
Two measures per card: `rank` (A=1 ... K=13) and `value` (2-10 face value, J/Q/K 10, A 1).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

CONTENT = Path(__file__).resolve().parent / "content" / "cards.yaml"
SUITS = ("H", "S", "D", "C")


class ContentError(ValueError):
    """content/cards.yaml does not describe a playable deck."""


@dataclass(frozen=True, slots=True)
class Card:
    id: str
    suit: str  # H, S, D, C, or "" for the Joker
    rank: int
    value: int


@dataclass(frozen=True, slots=True)
class Companion:
    card: str
    name: str
    limit: int
    blocks_escape: bool
    spendable: bool
    sees_top: bool


@dataclass(frozen=True, slots=True)
class Deck:
    cards: dict[str, Card]
    journey: tuple[str, ...]  # hearts and spades but the Destination, in deck order
    supply: tuple[str, ...]  # diamonds and clubs, in deck order
    destination: str
    destination_name: str
    nemesis: str
    nemesis_name: str
    nemesis_health: int
    nemesis_health_per_extra: int
    nemesis_attack: int
    reckoning: str
    revelation: str
    revelation_damage: int
    revelation_cut: int
    joker: str
    roomless: frozenset[str]
    strike_multiplier: dict[str, int]
    queen_cut: int
    rally_min: int
    rally_max: int
    companions: dict[str, Companion]
    companion_spend_value: int
    deliverance: str
    places: tuple[str, ...]


def _need(cond: bool, msg: str) -> None:
    if not cond:
        raise ContentError(f"{CONTENT.name}: {msg}")


def load(path: Path = CONTENT) -> Deck:
    with path.open(encoding="utf-8") as fh:
        raw = yaml.safe_load(fh)
    return build(raw)


def build(raw: Any) -> Deck:
    _need(isinstance(raw, dict), "the top level must be a mapping")
    ranks = raw.get("ranks")
    _need(isinstance(ranks, list) and len(ranks) == 13, "ranks must list the 13 ranks")
    rank_ids = [str(r.get("id")) for r in ranks]
    _need(len(set(rank_ids)) == 13, f"rank ids must be unique: {rank_ids}")
    _need([r.get("rank") for r in ranks] == list(range(1, 14)), "ranks must run 1..13 in order")
    for r in ranks:
        _need(isinstance(r.get("value"), int) and 1 <= r["value"] <= 10, f"rank {r.get('id')}: value 1..10")
    suits = raw.get("suits")
    _need(isinstance(suits, dict) and sorted(suits) == sorted(SUITS), f"suits must be exactly {SUITS}")
    cards: dict[str, Card] = {}
    for s in SUITS:
        for r in ranks:
            cid = f"{r['id']}{s}"
            _need(cid not in cards, f"duplicate card id {cid}")
            cards[cid] = Card(cid, s, r["rank"], r["value"])
    joker = raw.get("joker") or {}
    jid = str(joker.get("id", ""))
    _need(bool(jid) and jid not in cards, "the Joker needs an id of its own")
    cards[jid] = Card(jid, "", int(joker.get("rank", 0)), int(joker.get("value", 0)))

    def ref(cid: Any, what: str, suit: str | None = None, rank: int | None = None) -> str:
        cid = str(cid)
        _need(cid in cards, f"{what} refers to unknown card {cid!r}")
        if suit is not None:
            _need(cards[cid].suit == suit, f"{what} must be a card of suit {suit}, not {cid}")
        if rank is not None:
            _need(cards[cid].rank == rank, f"{what} must be of rank {rank}, not {cid}")
        return cid

    aces = raw.get("aces") or {}
    for key in ("destination", "nemesis", "reckoning", "revelation"):
        _need(isinstance(aces.get(key), dict), f"aces.{key} is missing")
    dest = ref(aces["destination"]["card"], "aces.destination", "H", 1)
    nem = ref(aces["nemesis"]["card"], "aces.nemesis", "S", 1)
    reck = ref(aces["reckoning"]["card"], "aces.reckoning", "C", 1)
    rev = ref(aces["revelation"]["card"], "aces.revelation", "D", 1)
    for key, field in (("nemesis", "health"), ("nemesis", "attack"), ("revelation", "damage"),
                       ("revelation", "counter_cut"), ("nemesis", "health_per_extra_traveller")):
        _need(isinstance(aces[key].get(field), int) and aces[key][field] >= 0, f"aces.{key}.{field} must be an int >= 0")
    multipliers = {}
    for s in ("D", "C"):
        m = suits[s].get("strike_multiplier")
        _need(isinstance(m, int) and m >= 1, f"suits.{s}.strike_multiplier must be a positive int")
        multipliers[s] = m
    roomless = frozenset(ref(c, "roomless") for c in raw.get("roomless") or ())
    allies = raw.get("allies") or {}
    rally_min, rally_max = int(allies.get("king_rally_min", 2)), int(allies.get("king_rally_max", 10))
    _need(1 <= rally_min <= rally_max <= 10, "allies: 1 <= king_rally_min <= king_rally_max <= 10")
    companions = {}
    for cid, c in (raw.get("companions") or {}).items():
        ref(cid, "companions", "H")
        _need(cards[cid].rank >= 11, f"companion {cid} must be a face card")
        companions[cid] = Companion(cid, str(c["name"]), int(c["limit"]), bool(c["blocks_escape"]),
                                    bool(c["spendable"]), bool(c["sees_top"]))
    _need(len(companions) == 3, "companions must name the three heart faces")
    deliverance = ref(raw.get("deliverance"), "deliverance", "C")
    journey = tuple(c.id for c in cards.values() if c.suit in ("H", "S") and c.id != dest)
    supply = tuple(c.id for c in cards.values() if c.suit in ("D", "C"))
    _need(len(journey) == 25 and len(supply) == 26, "the Journey must hold 25 cards and the Supply 26")
    places = tuple(str(p) for p in raw.get("places") or ())
    hearts = sum(1 for c in journey if cards[c].suit == "H")
    _need(len(places) >= hearts, f"places must name at least {hearts} stops")
    _need(len(set(places)) == len(places), "place names must be unique")
    return Deck(
        cards=cards, journey=journey, supply=supply,
        destination=dest, destination_name=str(aces["destination"].get("name", dest)),
        nemesis=nem, nemesis_name=str(aces["nemesis"].get("name", nem)),
        nemesis_health=aces["nemesis"]["health"], nemesis_health_per_extra=aces["nemesis"]["health_per_extra_traveller"],
        nemesis_attack=aces["nemesis"]["attack"],
        reckoning=reck, revelation=rev,
        revelation_damage=aces["revelation"]["damage"], revelation_cut=aces["revelation"]["counter_cut"],
        joker=jid, roomless=roomless, strike_multiplier=multipliers,
        queen_cut=int(allies.get("queen_counter_cut", 5)), rally_min=rally_min, rally_max=rally_max,
        companions=companions, companion_spend_value=int(raw.get("companion_spend_value", 10)),
        deliverance=deliverance, places=places,
    )


DECK = load()
CARDS = DECK.cards
RANK = {cid: c.rank for cid, c in CARDS.items()}
SUIT = {cid: c.suit for cid, c in CARDS.items()}
# What a card is worth when spent (covering, tolls, ruins): A-clubs and A-diamonds count 0.
VALUE = {cid: (0 if cid in DECK.roomless else c.value) for cid, c in CARDS.items()}
# Refuge actions of a heart: its value (faces 10).
REFUGE_ACTIONS = {cid: c.value for cid, c in CARDS.items() if c.suit == "H"}
FACES = frozenset(cid for cid, c in CARDS.items() if c.rank >= 11 and c.suit)
