"""The progress bar (only drawn on a terminal, so the CLI tests never reach it)."""

from __future__ import annotations

from tracehouse.pipeline.progress import NullProgress, RichProgress, progress_for


def test_the_rich_bar_runs_start_to_finish():
    bar = RichProgress()
    bar.start(total_bytes=1000, units=3)
    bar.advance(600)
    bar.advance(400)
    bar.finish()


def test_no_bar_when_disabled_or_not_a_terminal():
    assert isinstance(progress_for(False), NullProgress)
    assert isinstance(progress_for(True), NullProgress)  # pytest's stderr is not a terminal
