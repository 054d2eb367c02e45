"""The redactor on planted secrets and on values that only look random."""

from __future__ import annotations

import base64
import gc
import hashlib
import random
import time
import uuid
from collections import Counter
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.redaction.planted import (
    CONTEXTS,
    KINDS,
    PLACEMENTS,
    base64_wrapped,
    every_kind,
    place,
    plant,
)
from tracehouse.parsers import claude_code
from tracehouse.parsers.base import ParseOptions
from tracehouse.redaction.detect import Detector, compile_patterns
from tracehouse.redaction.redactor import Redactor
from tracehouse.redaction.rows import redact_result

KEY = b"k" * 32


@pytest.fixture(scope="module")
def redactor() -> Redactor:
    return Redactor(KEY, Detector())


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
def test_every_kind_in_every_context_is_replaced(redactor: Redactor, kind) -> None:
    rng = random.Random(kind.name)
    planted = [plant(rng, kind, context) for context in CONTEXTS]
    planted.append(base64_wrapped(plant(rng, kind, "env-file")))
    found: Counter[str] = Counter()
    out = redactor.texts([p.text for p in planted], found=found)
    for p, text in zip(planted, out, strict=True):
        assert text is not None and p.value not in text, (p.kind, text)
        assert "[REDACTED:" in text
    assert sum(found.values()) >= len(planted)


def test_the_same_secret_gives_the_same_marker_and_another_key_another(redactor) -> None:
    token = every_kind(1)[10].value  # a GitHub token in a prompt
    first, second = redactor.texts([f"use {token} now", f"TOKEN={token}"])
    marker = first.split("use ")[1].split(" now")[0]  # type: ignore[union-attr]
    assert marker.startswith("[REDACTED:github-") and marker in second  # type: ignore[operator]
    other = Redactor(b"o" * 32, Detector()).texts([f"use {token} now"])[0]
    assert other != first and token not in other  # type: ignore[operator]


def test_redacting_twice_changes_nothing_more(redactor) -> None:
    texts = [p.text for p in every_kind(2)]
    once = redactor.texts(texts)
    assert redactor.texts(once) == once


def test_a_secret_found_once_is_replaced_wherever_the_batch_holds_it(redactor) -> None:
    password = "Zq81vKt2mW9xPaLs"
    out = redactor.texts(
        [f'DB_PASSWORD="{password}"', f"I logged in with {password} and it worked"]
    )
    assert all(password not in text for text in out)  # type: ignore[operator]


def test_json_stays_json_and_escaped_secrets_are_found(redactor) -> None:
    key = next(p for p in every_kind(3) if p.kind == "private-key")
    params = orjson.dumps({"file_path": "/srv/id_rsa", "content": key.value}).decode()
    assert "\\n" in params  # the key's newlines are escapes in JSON text
    github = next(p for p in every_kind(3) if p.kind == "github-pat").value
    assignment = orjson.dumps({"env": {"password": "Zq81vKt2mW9xPaLs", "t": github}}).decode()
    out = redactor.texts([params, assignment], [True, True])
    for text, secret in ((out[0], key.value), (out[1], github)):
        assert text is not None and secret not in text
        orjson.loads(text)  # still JSON
    assert "Zq81vKt2mW9xPaLs" not in out[1]  # type: ignore[operator]
    body = orjson.loads(out[0])["content"]  # type: ignore[arg-type]
    assert "PRIVATE KEY" not in body or "[REDACTED:" in body


def test_allowed_values_and_own_patterns() -> None:
    own = Redactor(
        KEY, Detector({"acme-token": r"\b(acme_[a-z0-9]{32})\b"}, frozenset({"sk_live_allowed"}))
    )
    acme = "acme_" + "0123456789abcdef" * 2
    out = own.texts([f"deploy with {acme}", "api_key: sk_live_allowed"])
    assert out[0] == "deploy with " + own.marker("acme-token", acme)
    assert out[1] == "api_key: sk_live_allowed"
    with pytest.raises(ValueError, match="broken"):
        compile_patterns({"broken": "acme_(["})


def test_a_detector_travels_to_a_worker_process_as_its_settings() -> None:
    import pickle

    detector = Detector({"acme-token": r"acme_[a-z0-9]{8}"})
    detector.warm()
    clone = pickle.loads(pickle.dumps(detector))
    assert [f.kind for f in clone.scan(b"x acme_12345678 y")] == ["acme-token"]


_NOT_SECRETS = st.one_of(
    st.builds(lambda: str(uuid.uuid4())),
    st.binary(min_size=1, max_size=64).map(lambda b: hashlib.sha1(b).hexdigest()),
    st.binary(min_size=1, max_size=64).map(lambda b: hashlib.sha256(b).hexdigest()),
    st.binary(min_size=48, max_size=600).map(
        lambda b: "data:image/png;base64," + base64.b64encode(b"\x89PNG\r\n\x1a\n" + b).decode()
    ),
    st.lists(st.from_regex(r"[a-z][a-z0-9_-]{2,12}", fullmatch=True), min_size=2, max_size=8).map(
        lambda parts: "/home/dev/" + "/".join(parts) + ".py"
    ),
)


@settings(max_examples=300, deadline=None)
@given(values=st.lists(_NOT_SECRETS, min_size=1, max_size=8))
def test_hashes_uuids_paths_and_images_are_not_secrets(redactor, values) -> None:
    text = "commit " + " ".join(values) + " done"
    assert redactor.texts([text]) == [text]


@pytest.mark.slow
def test_a_cache_directory_that_cannot_be_made_costs_time_not_the_sync(tmp_path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("a file where the cache directory would go")
    detector = Detector(cache_dir=str(blocked / "rules"))  # compiled without a cache
    token = next(p for p in every_kind(4) if p.kind == "github-pat").value
    assert [f.kind for f in detector.scan(f"use {token}".encode())] == ["github-pat"]


def test_without_the_detection_library_redaction_says_so_once(monkeypatch) -> None:
    import importlib.util

    from tracehouse.config import Settings
    from tracehouse.errors import ConfigError
    from tracehouse.redaction import redactor_for

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "kingfisher_sdk" else real(name, *a),
    )
    with pytest.raises(ConfigError, match=r"kingfisher-secret-scanner.*redact = false"):
        redactor_for(Settings())
    assert redactor_for(Settings(redact=False)) is None


def test_a_secret_holding_a_lone_surrogate_stops_nothing() -> None:
    # A user's pattern may take in anything a log holds, a lone surrogate too.
    own = Redactor(KEY, Detector({"own": r"ticket=(\S{12,})"}))
    value = "ticket=ab\ud800cd123456"
    out = own.texts([f"see {value} here", '{"t": "plain"}'], [False, True])
    assert out[0] is not None and "ab\ud800cd" not in out[0] and "[REDACTED:own:" in out[0]


def test_a_redacted_parse_leaves_no_reference_cycle(redactor: Redactor) -> None:
    """Redaction's put-back steps are closures over the texts they were gathered into: kept past
    the scan, they held every row of a parse in a cycle until the garbage collector ran, and a
    parser process's memory grew by up to a batch of such garbage."""
    root = Path(__file__).parents[1] / "data" / "claude" / "home" / ".claude"
    units = claude_code.discover([root])
    assert units
    options = ParseOptions(now=time.time() + 3600)
    gc.collect()
    gc.disable()
    rows = 0
    try:
        for unit in units:
            result = redact_result(redactor, claude_code.parse(unit, None, options))
            rows += sum(map(len, result.rows.values()))
            del result
        assert rows > 0
        assert gc.collect() == 0
    finally:
        gc.enable()


@pytest.mark.parametrize("placement", list(PLACEMENTS))
@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
def test_every_kind_is_found_wherever_a_person_pastes_it(redactor, kind, placement) -> None:
    """Each text alone (a batch would help: a secret found once is replaced everywhere)."""
    rng = random.Random(f"{kind.name}/{placement}")
    for _ in range(4):
        planted = place(rng, kind, placement)
        [text] = redactor.texts([planted.text])
        assert text is not None and planted.value not in text, (placement, planted.text)
