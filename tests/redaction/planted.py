"""Realistic fake secrets, one generator a kind, and the sentences an agent's log carries them in.

Every value is random, in the shape its issuer gives it (prefix, alphabet, length, and the
checksum where the issuer puts one), so a detector that knows the kind finds it and none of them
is a live credential. `contexts` wraps a value the ways transcripts hold one: a prompt, a `.env`
a tool read, a `curl` command, a JSON value, a URL, base64 where a tool encodes.
"""

from __future__ import annotations

import base64
import random
import string
import zlib
from collections.abc import Callable
from dataclasses import dataclass

ALNUM = string.ascii_letters + string.digits
UPPER_DIGITS = string.ascii_uppercase + string.digits
HEX = "0123456789abcdef"
B64URL = ALNUM + "-_"


def _pick(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _base62(number: int, width: int) -> str:
    digits = string.digits + string.ascii_uppercase + string.ascii_lowercase
    out = ""
    while number:
        number, rest = divmod(number, 62)
        out = digits[rest] + out
    return out.rjust(width, "0")


def _github(rng: random.Random, prefix: str) -> str:
    # GitHub's tokens end in a base62 CRC32 of their random part; scanners check it.
    body = _pick(rng, ALNUM, 30)
    return f"{prefix}{body}{_base62(zlib.crc32(body.encode()), 6)}"


def _jwt(rng: random.Random) -> str:
    def part(raw: str) -> str:
        return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")

    header = part('{"alg":"HS256","typ":"JWT"}')
    claims = part(
        f'{{"sub":"{rng.randrange(10**9)}","name":"deploy","iat":{rng.randrange(10**9)}}}'
    )
    return f"{header}.{claims}.{_pick(rng, B64URL, 43)}"


def _private_key(rng: random.Random) -> str:
    lines = [_pick(rng, ALNUM + "+/", 64) for _ in range(12)]
    body = "\n".join(["MIIEowIBAAKCAQEA" + lines[0][16:], *lines[1:]])
    return f"-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----"


def _password(rng: random.Random) -> str:
    return (
        _pick(rng, string.ascii_letters, 6)
        + _pick(rng, string.digits, 3)
        + "!"
        + _pick(rng, ALNUM, 5)
    )


@dataclass(frozen=True)
class Kind:
    name: str
    make: Callable[[random.Random], str]
    # How the value sits in text, when it is only a secret beside a keyword: `{v}` is the value.
    framed: str = "{v}"


KINDS: tuple[Kind, ...] = (
    # An access key id beside its secret key, as `.env` files and `aws configure` hold them.
    Kind(
        "aws-access-key",
        lambda r: "AKIA" + _pick(r, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16),
        "AWS_ACCESS_KEY_ID={v}\nAWS_SECRET_ACCESS_KEY=Tq8v1Ck2mZ7dLw9pR4sX0yB6nH3jF5gA/eU+oKiY",
    ),
    Kind(
        "aws-secret-key",
        lambda r: _pick(r, ALNUM + "/+", 40),
        "aws_secret_access_key = {v}",
    ),
    Kind("github-pat", lambda r: _github(r, "ghp_")),
    Kind("github-oauth", lambda r: _github(r, "gho_")),
    Kind(
        "github-fine-grained",
        lambda r: f"github_pat_11{_pick(r, UPPER_DIGITS, 20)}_{_pick(r, ALNUM, 59)}",
    ),
    Kind("gitlab-pat", lambda r: "glpat-" + _pick(r, ALNUM + "-_", 20)),
    Kind(
        "slack-bot-token",
        lambda r: (
            "xoxb-"
            f"{_pick(r, string.digits, 12)}-{_pick(r, string.digits, 13)}-{_pick(r, ALNUM, 24)}"
        ),
    ),
    Kind(
        "slack-webhook",
        lambda r: (
            "https://hooks.slack.com/services/"
            f"T{_pick(r, UPPER_DIGITS, 10)}/B{_pick(r, UPPER_DIGITS, 10)}/{_pick(r, ALNUM, 24)}"
        ),
    ),
    Kind("stripe-live-key", lambda r: "sk_live_" + _pick(r, ALNUM, 99)),
    Kind(
        "openai-key",
        lambda r: f"sk-proj-{_pick(r, B64URL, 74)}T3BlbkFJ{_pick(r, B64URL, 74)}",
    ),
    Kind("anthropic-key", lambda r: f"sk-ant-api03-{_pick(r, B64URL, 93)}AA"),
    Kind("google-api-key", lambda r: "AIza" + _pick(r, ALNUM + "-_", 35)),
    Kind("jwt", _jwt, "Authorization: Bearer {v}"),
    Kind("private-key", _private_key),
    Kind(
        "postgres-url",
        lambda r: _password(r),
        "postgresql://app:{v}@db.prod.acme-corp.io:5432/orders",
    ),
    Kind("password-assignment", _password, 'DB_PASSWORD="{v}"'),
    Kind(
        "sendgrid-key",
        lambda r: f"SG.{_pick(r, B64URL, 22)}.{_pick(r, B64URL, 43)}",
    ),
    Kind("twilio-api-key", lambda r: "SK" + _pick(r, HEX, 32)),
    Kind("npm-token", lambda r: "npm_" + _pick(r, ALNUM, 36)),
    Kind("pypi-token", lambda r: "pypi-AgEIcHlwaS5vcmc" + _pick(r, B64URL, 70)),
    Kind("huggingface-token", lambda r: "hf_" + _pick(r, string.ascii_letters, 34)),
    Kind("digitalocean-token", lambda r: "dop_v1_" + _pick(r, HEX, 64)),
    Kind("shopify-token", lambda r: "shpat_" + _pick(r, "abcdef0123456789", 32)),
    Kind(
        "telegram-bot-token",
        lambda r: f"{r.randrange(10**8, 10**10)}:AA{_pick(r, B64URL, 33)}",
        "TELEGRAM_BOT_TOKEN={v}",
    ),
    Kind(
        "azure-storage-key",
        lambda r: _pick(r, ALNUM + "+/", 86) + "==",
        "DefaultEndpointsProtocol=https;AccountName=prodstore;AccountKey={v};EndpointSuffix=core.windows.net",
    ),
    Kind("generic-api-key", lambda r: _pick(r, HEX, 32), 'api_key: "{v}"'),
)

KINDS_BY_NAME = {kind.name: kind for kind in KINDS}

# The ways a transcript holds a value: `{s}` is the value in its frame.
CONTEXTS: dict[str, str] = {
    "prompt": "here is what I have, can you fix the deploy? {s} thanks",
    "env-file": "# .env\nNODE_ENV=production\n{s}\nLOG_LEVEL=info\n",
    "curl": "$ curl -s https://api.example.com/v1/items -H 'X-Trace: 1' -d '{s}'",
    "json": '{{"config": {{"note": "from ci", "value": "{s}"}}}}',
    "prose": "The failing step printed `{s}` before it exited.",
}


@dataclass(frozen=True)
class Planted:
    kind: str
    value: str  # the secret itself: what must never be written
    text: str  # the value in its frame and context, as a log holds it


def plant(rng: random.Random, kind: Kind, context: str) -> Planted:
    value = kind.make(rng)
    framed = kind.framed.format(v=value)
    return Planted(kind.name, value, CONTEXTS[context].format(s=framed))


def base64_wrapped(planted: Planted) -> Planted:
    """The planted text as a tool that encodes its output shows it (a file read as base64)."""
    encoded = base64.b64encode(planted.text.encode()).decode()
    return Planted(planted.kind, planted.value, f"content (base64): {encoded}")


def every_kind(seed: int = 7) -> list[Planted]:
    """Each kind in each context, from one seed: the same list every time."""
    rng = random.Random(seed)
    return [plant(rng, kind, context) for kind in KINDS for context in CONTEXTS]


# How a person names a secret in a sentence: a value that says nothing of itself needs its key
# word near it (DESIGN §9: found when one is near, not only after `KEY=`).
NAMED = {
    "aws-secret-key": ("AWS_SECRET_ACCESS_KEY", "my AWS secret access key is", "AWS 密钥"),
    "azure-storage-key": ("AZURE_STORAGE_KEY", "the storage account key is", "存储账户密钥"),
    "password-assignment": ("DB_PASSWORD", "the database password is", "数据库密码是"),
    "generic-api-key": ("SERVICE_API_KEY", "the api key is", "接口密钥"),
    "postgres-url": ("DATABASE_URL", "connect with", "连接"),
    "telegram-bot-token": ("TELEGRAM_BOT_TOKEN", "the bot token is", "机器人"),
}


def _sentence(kind: Kind, value: str) -> tuple[str, str, str, str]:
    """(variable, phrase, CJK phrase, value as written): the value in its frame where the frame
    is what makes it a secret (a password inside a URL)."""
    variable, phrase, cjk = NAMED.get(
        kind.name, (kind.name.upper().replace("-", "_"), "it is", "密钥")
    )
    written = kind.framed.format(v=value) if kind.name == "postgres-url" else value
    return variable, phrase, cjk, written


# The places a person pastes a value: `{n}` its variable's name, `{p}` the words that name it,
# `{c}` those words in Chinese, `{v}` the value. Each placement is a whole text.
PLACEMENTS: dict[str, str] = {
    "after-key": "{n}={v}",
    "json": '{{"env": {{"{n}": "{v}"}}}}',
    "sentence-period": "Use it: {p} {v}. Then deploy.",
    "sentence-comma": "Use my key ({p} {v}, then deploy.",
    "sentence-paren": "Deploy with my key ({p} {v}) now.",
    "cjk-full-stop": "请用{c}{v}。然后部署。",
    "cjk-corner-quote": "{c}「{v}」",
    "quoted": "I told it \"{p} '{v}'\" twice",
    "url-encoded": "https://example.com/callback?{q}%26next%3D1",
    "base64": "content (base64): {b}",
}


def place(rng: random.Random, kind: Kind, placement: str) -> Planted:
    """A fresh value of `kind` in `placement`; its `value` is what must never be written: the
    value as that placement writes it (percent-encoded, or the whole base64 text)."""
    import urllib.parse

    variable, phrase, cjk, written = _sentence(kind, kind.make(rng))
    if placement == "url-encoded":
        encoded = urllib.parse.quote(f"{variable}={written}", safe="")
        secret = urllib.parse.quote(_secret_part(kind, written), safe="")
        return Planted(kind.name, secret, PLACEMENTS[placement].format(q=encoded))
    if placement == "base64":
        inner = f"{phrase} {written}\n".encode()
        encoded = base64.b64encode(inner).decode()
        return Planted(kind.name, encoded, PLACEMENTS[placement].format(b=encoded))
    text = PLACEMENTS[placement].format(n=variable, p=phrase, c=cjk, v=written)
    return Planted(kind.name, _secret_part(kind, written), text)


def _secret_part(kind: Kind, written: str) -> str:
    """What of a written value is the secret: a URL's password, else the value."""
    if kind.name == "postgres-url":
        return written.split("://app:", 1)[1].split("@", 1)[0]
    return written
