"""Settings: defaults < config file < environment < flags; one clear error per bad value."""

from __future__ import annotations

from pathlib import Path

import pytest

from tracehouse.config import DOCS, Settings, load_settings, parse_source_flags
from tracehouse.errors import ConfigError

REPO = Path(__file__).resolve().parent.parent


def test_precedence(tmp_path):
    config = tmp_path / "c.toml"
    config.write_text('store = "/from/file.db"\nworkers = 3\nbatch_sessions = 7\n')
    env = {"TRACEHOUSE_CONFIG": str(config), "TRACEHOUSE_WORKERS": "5"}
    settings = load_settings(env=env)
    assert settings.store == "/from/file.db"
    assert settings.workers == 5
    assert settings.batch_sessions == 7
    assert settings.with_flags(workers=1, store=None).workers == 1


def test_defaults_without_a_file(tmp_path):
    settings = load_settings(env={})
    assert settings == Settings()
    assert settings.store.endswith("ledger.db")


@pytest.mark.parametrize(
    ("text", "setting"),
    [
        ("workers = 'many'\n", "workers"),
        ("colour = 1\n", "colour"),
        ("sources = { vim = [] }\n", "sources"),
        ("progress = 'perhaps'\n", "progress"),
    ],
)
def test_bad_values_name_setting_and_file(tmp_path, text, setting):
    config = tmp_path / "c.toml"
    config.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_settings(config)
    assert setting in str(info.value) and str(config) in str(info.value)


def test_bad_environment_names_the_variable():
    with pytest.raises(ConfigError, match="TRACEHOUSE_BATCH_BYTES"):
        load_settings(env={"TRACEHOUSE_BATCH_BYTES": "0"})


def test_a_missing_config_file_is_an_error(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings(tmp_path / "nope.toml")


def test_source_flags():
    assert parse_source_flags(["claude-code=/a", "claude-code=/b", "codex"]) == {
        "claude-code": ("/a", "/b"),
        "codex": (),
    }


def test_documented_config_matches_the_settings():
    """config/tracehouse.toml documents every setting, with its default, and nothing else."""
    import re
    import tomllib

    text = (REPO / "config" / "tracehouse.toml").read_text()
    settings = re.findall(r"^# (\w+) = (.+)$", text, flags=re.MULTILINE)
    assert {name for name, _ in settings} == set(DOCS)
    defaults = tomllib.loads("\n".join(f"{n} = {v}" for n, v in settings))
    assert defaults["batch_bytes"] == Settings().batch_bytes
    assert defaults["workers"] == Settings().workers


def test_service_examples_run_the_real_commands():
    import plistlib

    examples = REPO / "config" / "examples"
    unit = (examples / "tracehouse-live.service").read_text()
    assert "ExecStart=/usr/bin/env uv run --frozen tracehouse sync live" in unit
    plist = plistlib.loads((examples / "com.tracehouse.live.plist").read_bytes())
    assert plist["ProgramArguments"][1:] == ["run", "--frozen", "tracehouse", "sync", "live", "-q"]
    cron = [
        line
        for line in (examples / "crontab.txt").read_text().splitlines()
        if line and not line.startswith("#")
    ]
    assert len(cron) == 1 and "tracehouse sync backfill" in cron[0]


def test_the_team_example_is_a_valid_config_naming_a_postgresql_ledger(tmp_path):
    from tracehouse.config import load_settings

    example = REPO / "config" / "examples" / "team-postgresql.toml"
    settings = load_settings(example)
    assert settings.store.startswith("postgresql://tracehouse:CHANGE-ME@")
    assert "sslmode=require" in settings.store


def test_redaction_settings_are_checked_where_they_enter(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text('redact_patterns = { acme = "acme_([" }\n')
    with pytest.raises(ConfigError, match=r"redact_patterns.*'acme' is not a regular expression"):
        load_settings(config, env={})
    env = {
        "TRACEHOUSE_REDACT": "false",
        "TRACEHOUSE_REDACT_PATTERNS": '{ acme-token = "acme_[a-z0-9]{8}" }',
        "TRACEHOUSE_REDACT_ALLOW": "sk_test_one,sk_test_two",
    }
    settings = load_settings(None, env=env)
    assert settings.redact is False
    assert settings.redact_patterns == {"acme-token": "acme_[a-z0-9]{8}"}
    assert settings.redact_allow == ("sk_test_one", "sk_test_two")
    with pytest.raises(ConfigError, match="TRACEHOUSE_REDACT_PATTERNS"):
        load_settings(None, env={"TRACEHOUSE_REDACT_PATTERNS": "not a table"})


def test_the_redaction_key_is_made_once_private_and_shared(tmp_path):
    import os
    import stat
    from concurrent.futures import ThreadPoolExecutor

    from tracehouse.redaction.key import load_key

    path = tmp_path / "data" / "redaction.key"
    with ThreadPoolExecutor(8) as pool:
        keys = set(pool.map(lambda _: load_key(path), range(16)))
    assert len(keys) == 1 and len(next(iter(keys))) == 32
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert not [p for p in path.parent.iterdir() if p.name != "redaction.key"]
    path.write_bytes(b"short")
    with pytest.raises(ConfigError, match="fewer than 32"):
        load_key(path)
