"""One home holding every source (assembled from fixture homes by symlinks, so nothing is
copied or written beside them): one `sync backfill --home` imports every source, no rejects.
Roo Code, Kilo Code, Goose and Factory Droid, of which the fixtures hold no real conversation,
come from the tests' own homes."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import DATA
from tracehouse.cli.app import app
from tracehouse.model.tables import PROVIDERS
from tracehouse.store import open_store

pytestmark = pytest.mark.corpus

PARTS = {
    ".claude": "a331468564-claude-codex-chat-archives/.claude",
    ".codex": "a331468564-claude-codex-chat-archives/.codex",
    ".config/Cursor": "GodJuegos-DotFile-Johnas/.config/Cursor",
    ".config/Code": "haram-333-fineye/.config/Code",
    ".gemini": "LAF-US-IDAHO-VAULT/.gemini",
    ".cursor": "LAF-US-IDAHO-VAULT/.cursor",
    ".local/share/opencode": "richardaiand-aiand-portfolio-web/.local/share/opencode",
    ".copilot": "XEFF09-dotfiles/.copilot",
    ".qwen": "haidonglethqb-CloudSchool/.qwen",
    ".pi": "EddieisxD-dotfiles/.pi",
    ".kimi": "youngstunners88-ihhashi/.kimi",
    ".continue": "toamedbd-code-hms/.continue",
    ".openhands": "sheepdestroyer-SheepVibes/.openhands",
    ".local/share/zed": "atlasatakahraman-AtlasAta-DotFiles/.local/share/zed",
    ".local/state/warp-terminal": "tooy2-hyprmatu/.local/state/warp-terminal",
    "projects/Simple-Calulator": "AndrewJacop-Simple-Calulator/projects/Simple-Calulator",
    "projects/dotfiles": "michaeljjacob-dotfiles/projects/dotfiles",
}


STORAGE = ".config/{editor}/User/globalStorage"
MADE = {
    f"{STORAGE.format(editor='VSCodium')}/rooveterinaryinc.roo-cline":
        DATA / "roo/home/.config/Code/User/globalStorage/rooveterinaryinc.roo-cline",
    f"{STORAGE.format(editor='Code - Insiders')}/kilocode.kilo-code":
        DATA / "kilo/home/.config/Code/User/globalStorage/kilocode.kilo-code",
    ".local/share/goose": DATA / "goose/home/.local/share/goose",
    ".factory": DATA / "droid/home/.factory",
}  # fmt: skip


def test_a_home_with_every_source_imports_in_one_run(corpus: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    for name, source in PARTS.items():
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).symlink_to((corpus / "homes" / source).resolve())
    for name, made in MADE.items():
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).symlink_to(made.resolve())
    store = tmp_path / "ledger.db"
    result = CliRunner().invoke(
        app, ["sync", "backfill", "--home", str(home), "--store", str(store)]
    )
    assert result.exit_code == 0, result.output
    assert "0 rejects" in result.output
    ledger = open_store(store)
    rows = ledger.query("SELECT source_provider, count(*) AS n FROM sessions GROUP BY 1")
    ledger.close()
    got = {r["source_provider"]: r["n"] for r in rows}
    assert set(got) == set(PROVIDERS), got
    assert all(n > 0 for n in got.values())
