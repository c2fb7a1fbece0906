"""A game's replay words (the move list every seat and spectator reads while the game runs)
never name what the views hide. The replay blanks hidden card ids in them; these are the
events whose words named a hidden card some other way (by its display name, or its value),
found by a probe that read each line against the reader's hidden cards."""

from __future__ import annotations

from croupier.games.delve import events as DE
from croupier.games.delve import views as delve_views
from croupier.games.delve.cards import CONTENT as DELVE
from croupier.games.expeditions import events as XE
from croupier.games.expeditions import views as expeditions_views
from croupier.games.journey import events as JE
from croupier.games.journey import views as journey_views


def test_delve_counts_the_cards_a_hazard_or_a_choice_destroys_and_names_none():
    cards = ("prayer.s1.1", "punch.s1.2")
    names = {DELVE.design(c).name for c in cards}
    for event in (DE.CardsDestroyed(seat=1, cards=cards),
                  DE.ChoiceConfirmed(seat=1, mode="destroy", cards=cards),
                  DE.ChoiceConfirmed(seat=1, mode="rescue", cards=cards)):
        words = delve_views.describe(event)
        assert "2 cards" in words and not any(n in words for n in names), words
    # Discarded cards go to the discard pile, which every view shows: they are named.
    assert "Prayer" in delve_views.describe(DE.ChoiceConfirmed(seat=1, mode="discard", cards=cards[:1]))


def test_expeditions_does_not_say_what_a_victory_point_chip_is_worth():
    words = expeditions_views.describe(XE.PointsFound(seat=0, color="red", step=4, tile="vp-15-1", points=15))
    assert "15" not in words and "victory-point chip" in words


def test_journey_does_not_name_the_card_the_joker_steals_from_the_purse():
    words = journey_views.describe(JE.JokerStole(card="QH"))
    assert "QH" not in words and "Q" not in words.replace("Joker", "")
