"""Who is on the other end of a socket: Telegram's ``initData``, or a signed seat link.

Telegram signs a Mini App's ``initData`` with a key derived from the bot token
(core.telegram.org/bots/webapps#validating-data-received-via-the-mini-app): the data-check
string is every field but ``hash``, sorted, as ``key=value`` lines; the secret key is
HMAC-SHA256 of the token under the key ``WebAppData``. We also refuse data older than
``max_age`` seconds, so a leaked link stops working.

``xuezhan play`` has no Telegram: it gives each seat a link carrying ``table.user.signature``,
signed with a secret made when the server starts.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode

DEFAULT_MAX_AGE = 24 * 3600


class AuthError(ValueError):
    """The page's credentials are refused; ``key`` names why (forged, expired, malformed)."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


@dataclass(frozen=True, slots=True)
class WebUser:
    """A person the server has checked; ``start_param`` is what a t.me/...?startapp= link carried."""

    user_id: int
    name: str
    language: str | None = None
    start_param: str | None = None


def _secret_key(bot_token: str) -> bytes:
    return hmac.new(b"WebAppData", bot_token.encode(), hashlib.sha256).digest()


def sign_init_data(fields: dict[str, str], bot_token: str) -> str:
    """``initData`` as Telegram would send it (tests and the local fake use this)."""
    check = "\n".join(f"{k}={v}" for k, v in sorted(fields.items()))
    digest = hmac.new(_secret_key(bot_token), check.encode(), hashlib.sha256).hexdigest()
    return urlencode({**fields, "hash": digest})


def check_init_data(init_data: str, bot_token: str, *, max_age: float = DEFAULT_MAX_AGE,
                    now: float | None = None) -> WebUser:
    """The user Telegram vouches for, or ``AuthError`` (forged, expired or malformed)."""
    try:
        pairs = parse_qsl(init_data, keep_blank_values=True, strict_parsing=True)
    except ValueError:
        raise AuthError("malformed") from None
    fields = dict(pairs)
    if len(fields) != len(pairs):
        raise AuthError("malformed")
    received = fields.pop("hash", "")
    check = "\n".join(f"{k}={v}" for k, v in sorted(fields.items()))
    expected = hmac.new(_secret_key(bot_token), check.encode(), hashlib.sha256).hexdigest()
    if not received or not hmac.compare_digest(expected.encode(), received.encode()):  # any text, no TypeError
        raise AuthError("forged")
    try:
        signed_at = int(fields["auth_date"])
        user = json.loads(fields["user"])
        user_id = int(user["id"])
    except (KeyError, ValueError, TypeError):
        raise AuthError("malformed") from None
    if (time.time() if now is None else now) - signed_at > max_age:
        raise AuthError("expired")
    name = " ".join(str(user.get(k, "")) for k in ("first_name", "last_name")).strip() or str(user_id)
    language = user.get("language_code")
    return WebUser(user_id, name, language if isinstance(language, str) else None, fields.get("start_param"))


def seat_token(secret: bytes, table_id: int, user_id: int) -> str:
    """A seat link's credential: who may sit at which table, signed by this server."""
    body = f"{table_id}.{user_id}"
    return f"{body}.{_mac(secret, body)}"


def check_seat_token(secret: bytes, token: str) -> tuple[int, int]:
    """(table_id, user_id) of a token this server signed, or ``AuthError("forged")``."""
    parts = token.split(".")
    if len(parts) != 3 or not all(p.isascii() and p.lstrip("-").isdigit() for p in parts[:2]):
        raise AuthError("malformed")
    body = f"{parts[0]}.{parts[1]}"
    if not hmac.compare_digest(_mac(secret, body).encode(), parts[2].encode()):
        raise AuthError("forged")
    return int(parts[0]), int(parts[1])


def _mac(secret: bytes, body: str) -> str:
    return hmac.new(secret, body.encode(), hashlib.sha256).hexdigest()[:32]
