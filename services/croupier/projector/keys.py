"""Redis key names of the read models. Every key of one game shares the hash tag {game_id},
so one game's keys live in one Redis Cluster slot and are written by one script."""

from __future__ import annotations


class Keys:
    def __init__(self, prefix: str = ""):
        self.p = prefix

    def meta(self, game_id: str) -> str:
        return f"{self.p}g:{{{game_id}}}"

    def state(self, game_id: str) -> str:
        return f"{self.p}g:{{{game_id}}}:state"

    def views(self, game_id: str) -> str:
        return f"{self.p}g:{{{game_id}}}:views"

    def feed(self, game_id: str) -> str:
        return f"{self.p}feed:{{{game_id}}}"

    def lobby(self, game_type: str) -> str:
        return f"{self.p}lobby:{game_type}"

    def running(self, game_type: str) -> str:
        return f"{self.p}games:{game_type}:running"

    def finished(self, game_type: str) -> str:
        return f"{self.p}games:{game_type}:finished"

    def all_games(self) -> str:
        return f"{self.p}games:all"

    def offsets(self) -> str:
        """The projectors' record of where each partition's folded events end ("topic/partition"
        -> the offset to read next), written after the read models it covers (service.py)."""
        return f"{self.p}projector:offsets"

    def lag(self) -> str:
        return f"{self.p}projector:lag"

    def lag_epoch(self) -> str:
        """Per "topic/partition": the rebuild epoch the projector reporting its lag had
        rewound for, written with each reading of lag (a rebuild's --wait counts only the
        readings of its own epoch, from every partition)."""
        return f"{self.p}projector:lag_epoch"

    def epoch(self) -> str:
        return f"{self.p}projector:epoch"

    def rebuilding(self) -> str:
        """Set by `croupier projector rebuild` while it drops the read models (and the record
        of offsets with them), until its epoch is bumped: the projectors then take a record
        gone for the rebuild's, not for a loss to fold again from (service.py _check_record)."""
        return f"{self.p}projector:rebuilding"

    def epoch_ack(self) -> str:
        return f"{self.p}projector:epoch_ack"

    def owners(self, game_type: str) -> str:
        return f"{self.p}croupier:owners:{game_type}"

    def partitions(self, game_type: str) -> str:
        return f"{self.p}croupier:partitions:{game_type}"

    def read_model_patterns(self) -> list[str]:
        """What a rebuild drops, in this order: the listings first, each game's own keys last.
        A projector may fold a game again while the rebuild drops (a partition it rewinds on
        finding a game's keys gone): with the listings gone first, whatever it writes meanwhile
        is either kept whole (listings and the game's keys) or loses the game's keys too, which
        the epoch's fold from zero then writes again, listings and all. The other way round a
        game could keep its keys but lose its listings, and the epoch's fold, finding the
        game's state current, would not list it again."""
        # The projectors' offsets and lag go first: a projector that starts in the middle of
        # the drop reads from the group's offsets (reset to zero), and the rebuild's wait
        # reads no lag of the folds before it. stats:* is what older versions wrote.
        return [self.offsets(), self.lag(), self.lag_epoch(), f"{self.p}lobby:*", f"{self.p}games:*", f"{self.p}stats:*",
                f"{self.p}g:*"]
