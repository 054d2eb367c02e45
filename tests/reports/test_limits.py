"""Spending limits (issue #68): read from the config with a clear message for a bad one, shown
against their period's spend by `usage limits` (the usage report's own figures), and warned of
by a sync that crosses one."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import DATA
from tests.reports.test_usage import PRICES, turn
from tests.store.factory import batch, item
from tracehouse.cli.app import app
from tracehouse.config import Limit, load_settings, parse_limits
from tracehouse.errors import ConfigError
from tracehouse.reports.filters import build_session_filters
from tracehouse.reports.limits import period_start, standings
from tracehouse.reports.usage import usage

SONNET = "claude-sonnet-4-5-20250929"


def _at(delta: timedelta) -> str:
    """A time `delta` before now, when the test runs."""
    return (datetime.now(UTC) - delta).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _earlier_today(delta: timedelta) -> str:
    """A time `delta` before now, or today's first second where that was yesterday here: a
    test run minutes after midnight still has its turns in this day, week and month."""
    now = datetime.now(UTC)
    midnight = now.astimezone().replace(hour=0, minute=0, second=1, microsecond=0)
    return max(now - delta, midnight.astimezone(UTC)).strftime("%Y-%m-%dT%H:%M:%S.000Z")


@pytest.fixture
def ledger(store):  # type: ignore[no-untyped-def]
    claude = item("c1", 2, model=SONNET, project="api")
    claude["turns"] = [turn(0, _earlier_today(timedelta(minutes=5)), SONNET, 1_000_000, 100_000),
                       turn(1, _at(timedelta(days=40)), SONNET, 9_000_000, 1)]  # fmt: skip
    codex = item("x1", 2, model="gpt-5.4", project="web")
    codex["sourceProvider"] = "codex"
    codex["turns"] = [turn(0, _earlier_today(timedelta(minutes=3)), "gpt-5.4", 2000, 10)]
    store.import_batch(batch([claude, codex]))
    return store


def test_a_limit_is_measured_as_the_usage_report_counts(ledger) -> None:  # type: ignore[no-untyped-def]
    day = Limit("day", cost=2.0, provider="claude-code")
    tokens = Limit("month", tokens=1_000_000)
    found = standings(ledger, [day, tokens], PRICES)
    since = period_start("day", datetime.now().astimezone()).astimezone(UTC).isoformat()
    report = usage(ledger, "daily", build_session_filters(providers=["claude-code"], since=since),
                   PRICES)  # fmt: skip
    assert found[0].cost == pytest.approx(report.total.cost) and found[0].cost > 0
    assert found[0].crossed == (found[0].cost >= 2.0)
    # the 40-day-old turn is outside this month whatever the day; both agents' recent turns in
    assert found[1].tokens == 1_100_000 + 2010 and found[1].crossed


def test_periods_start_at_local_midnight_monday_and_the_first() -> None:
    now = datetime(2026, 12, 6, 15, 30).astimezone()  # a Sunday
    assert period_start("day", now).day == 6 and period_start("day", now).hour == 0
    assert period_start("week", now).day == 30 and period_start("week", now).month == 11
    assert period_start("month", now).day == 1


@pytest.mark.parametrize(("entry", "says"), [
    ({"per": "day"}, "give cost (US dollars) or tokens"),
    ({"cost": 1, "tokens": 5}, "give cost (US dollars) or tokens"),
    ({"cost": -1}, "a number of dollars above 0"),
    ({"tokens": 1.5}, "a whole number above 0"),
    ({"cost": 1, "per": "hour"}, "one of day, week, month"),
    ({"cost": 1, "provider": "clod"}, "clod"),
    ({"cost": 1, "budget": 3}, "unknown key 'budget'"),
])  # fmt: skip
def test_a_bad_limit_is_refused_naming_it(tmp_path: Path, entry: dict, says: str) -> None:
    config = tmp_path / "c.toml"
    config.write_text(_toml([{"cost": 5}, entry]))
    with pytest.raises(ConfigError, match="limits") as raised:
        load_settings(config, env={})
    assert "limit 2" in str(raised.value) and says in str(raised.value)


def _toml(entries: list[dict]) -> str:
    out = []
    for entry in entries:
        out.append("[[limits]]")
        out += [f"{k} = {json.dumps(v)}" for k, v in entry.items()]
    return "\n".join(out) + "\n"


def test_the_environment_gives_limits_as_json() -> None:
    settings = load_settings(env={"TRACEHOUSE_LIMITS": '[{"tokens": 10, "per": "week"}]'})
    assert settings.limits == (Limit("week", tokens=10),)
    assert parse_limits(settings.limits) == settings.limits


def test_a_sync_that_crosses_a_limit_says_so(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text(_toml([{"tokens": 1, "per": "month"}, {"tokens": 10**12, "per": "day"}]))
    home = tmp_path / "home"
    shutil.copytree(DATA / "claude" / "home", home)
    for path in (home / ".claude").rglob("*.jsonl"):  # its turns today, so this month's
        today = datetime.now(UTC).strftime("%Y-%m-%dT")
        text = path.read_text().replace("2026-03-01T", today)
        path.write_text(text.replace("2026-02-01T", today))
    command = ["sync", "backfill", "--config", str(config), "--home", str(home),
               "--store", str(tmp_path / "l.db")]  # fmt: skip
    first = CliRunner().invoke(app, command)
    assert first.exit_code == 0, first.output
    assert "limit crossed: everything:" in first.output and "this month" in first.output
    assert "this day" not in first.output
    again = CliRunner().invoke(app, command)  # nothing new stored: no reading, no warning
    assert "limit crossed" not in again.output
