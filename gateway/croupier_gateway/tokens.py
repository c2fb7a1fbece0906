"""Seat tokens: who may act for one seat of one table, until when.

A token is `base64url(payload) "." base64url(HMAC-SHA256(key, base64url(payload)))` with
the payload the canonical JSON of {game_id, seat, exp, kid, jti}. `kid` names the key that
signed it (a short hash of the key, never the key), so a gateway that keeps the previous key
after a rotation still accepts the tokens it signed. `jti` is this join's id: the gateway
remembers the jti of each seat's current holder, so a token of a seat that was left and
taken again by someone else no longer works. `join` is the seq of the seat's SeatJoined
event: should Redis lose the holders, the read models (rebuilt from the log) still name the
join that holds each seat, and a token of that join is accepted.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from dataclasses import dataclass

from croupier.engine.codec import canonical_bytes

MAX_TOKEN_CHARS = 1024
VERIFIED_CACHE = 20_000  # tokens whose signature was checked, remembered (their expiry is checked each time)


class TokenError(ValueError):
    """Why a token was not accepted (words for the caller: never echoes a key)."""


@dataclass(frozen=True)
class SeatClaims:
    game_id: str
    seat: int
    exp: int
    kid: str
    jti: str
    join: int = 0  # the seq of the SeatJoined event this token was issued for (0: unknown)


def key_id(key: str) -> str:
    return hashlib.sha256(b"croupier-kid:" + key.encode("utf-8")).hexdigest()[:12]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    if not text or len(text) % 4 == 1 or any(c not in _ALPHABET for c in text):
        raise TokenError("the token is not base64url")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


_ALPHABET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


class TokenSigner:
    def __init__(self, key: str, previous_key: str = ""):
        if not key:
            raise ValueError("a signing key is required")
        self.kid = key_id(key)
        self._keys = {self.kid: key.encode("utf-8")}
        if previous_key:
            self._keys.setdefault(key_id(previous_key), previous_key.encode("utf-8"))
        self._verified: dict[str, SeatClaims] = {}

    def _sign(self, kid: str, body: str) -> bytes:
        return hmac.new(self._keys[kid], body.encode("ascii"), hashlib.sha256).digest()

    def issue(self, game_id: str, seat: int, ttl_s: int, *, now: float | None = None,
              jti: str | None = None, join: int = 0) -> tuple[str, SeatClaims]:
        now = time.time() if now is None else now
        claims = SeatClaims(game_id=game_id, seat=seat, exp=int(now + ttl_s), kid=self.kid,
                            jti=jti or secrets.token_urlsafe(12), join=join)
        payload = {"game_id": claims.game_id, "seat": claims.seat, "exp": claims.exp, "kid": claims.kid,
                   "jti": claims.jti}
        if join:
            payload["join"] = join
        body = _b64(canonical_bytes(payload))
        return f"{body}.{_b64(self._sign(self.kid, body))}", claims

    def verify(self, token: str, *, now: float | None = None) -> SeatClaims:
        claims = self._verified.get(token) if isinstance(token, str) else None
        if claims is not None:
            # The same text verified before under the same keys: only the time has moved.
            if claims.exp <= (time.time() if now is None else now):
                raise TokenError("the token has expired")
            return claims
        claims = self._verify(token, now)
        verified = self._verified
        if len(verified) >= VERIFIED_CACHE:
            for key in list(verified)[: VERIFIED_CACHE // 2]:
                del verified[key]
        verified[token] = claims
        return claims

    def _verify(self, token: str, now: float | None) -> SeatClaims:
        if not isinstance(token, str) or not token or len(token) > MAX_TOKEN_CHARS:
            raise TokenError("the token is missing or too long")
        body, dot, sig = token.partition(".")
        if not dot or "." in sig:
            raise TokenError("the token is not a seat token")
        raw = _unb64(body)
        mac = _unb64(sig)
        try:
            payload = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            raise TokenError("the token is not a seat token") from None
        if not isinstance(payload, dict):
            raise TokenError("the token is not a seat token")
        kid = payload.get("kid")
        if not isinstance(kid, str) or kid not in self._keys:
            raise TokenError("the token was signed with a key this gateway does not know")
        if not hmac.compare_digest(mac, self._sign(kid, body)):
            raise TokenError("the token's signature does not match")
        game_id, seat, exp, jti = payload.get("game_id"), payload.get("seat"), payload.get("exp"), payload.get("jti")
        if (not isinstance(game_id, str) or not isinstance(seat, int) or isinstance(seat, bool)
                or not isinstance(exp, int) or isinstance(exp, bool) or not isinstance(jti, str)):
            raise TokenError("the token's payload is incomplete")
        join = payload.get("join", 0)
        if not isinstance(join, int) or isinstance(join, bool) or join < 0:
            raise TokenError("the token's payload is incomplete")
        now = time.time() if now is None else now
        if exp <= now:
            raise TokenError("the token has expired")
        return SeatClaims(game_id=game_id, seat=seat, exp=exp, kid=kid, jti=jti, join=join)
