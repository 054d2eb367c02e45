"""`tracehouse browse`: the ledger in the terminal — the sessions, search as you type, a
transcript beside them, and the keys that act on a session.

A thin layer over the library the CLI uses: `reports.filters.list_sessions` for the list,
`reports.searching.search` for the hits (hybrid where the ledger holds vectors), the transcript
as `sessions show` renders it, `resume.plan.hint` for the command that continues a session.
Keyboard first: `/` searches, the arrows move, `enter` opens, `r` shows how to resume (`R` runs
it, browse stepping aside until the agent exits), `y` copies the label, `o` opens the session in
the browser (`tracehouse open`, until browse quits), `t` unfolds thinking, `escape` goes back to
the list, `q` quits; `ctrl+p` offers Textual's commands, light and dark themes among them. The
mouse works too.
"""

from __future__ import annotations

import subprocess
import sys
from contextlib import suppress
from dataclasses import dataclass
from typing import Any, ClassVar

from rich.text import Text
from textual.app import App, ComposeResult, SuspendNotSupported
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.widgets import DataTable, Footer, Input, Static, TextArea

from tracehouse.errors import TracehouseError
from tracehouse.search.hits import MARK, SearchFilters
from tracehouse.shown import escaped
from tracehouse.store.protocol import SessionStore
from tracehouse.timespec import local_time

LISTED = 200  # sessions in the list; a search finds the others
HITS = 50
TYPED_PAUSE = 0.15  # seconds a query rests before it is searched: typing is not interrupted


@dataclass(frozen=True)
class Row:
    """What a row of the table stands for: a session, and where a hit opens it."""

    label: str
    session_id: str
    at: str | None = None


class Browse(App[None]):
    TITLE = "tracehouse"
    CSS = """
    #query { height: 3; }
    #list { width: 1fr; min-width: 30; }
    #transcript { width: 2fr; }
    #status { height: 1; padding: 0 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("/", "search", "Search"),
        Binding("escape", "to_list", "List"),
        Binding("R", "run_resume", "Run it", show=False),  # before `r`, which also hears R
        Binding("r", "resume", "Resume"),
        Binding("y", "copy", "Copy label"),
        Binding("o", "browser", "Browser"),
        Binding("t", "thinking", "Thinking"),
        Binding("q", "quit", "Quit"),
    ]

    def __init__(
        self, store: SessionStore, store_flag: str, embeddings: Any = None, shown: str = ""
    ) -> None:
        super().__init__()
        self.sub_title = shown  # the ledger, as the other commands show it
        self.store = store
        self.store_flag = store_flag  # `--store` as given, for the commands it starts
        self.embeddings = embeddings
        self.rows: list[Row] = []
        self.shown: Row | None = None
        self.thinking = False
        self.last_hint: str | None = None
        self.opened: list[subprocess.Popen[bytes]] = []  # `tracehouse open`s `o` started

    def compose(self) -> ComposeResult:
        yield Input(placeholder="search — words, or a question (/)", id="query")
        with Horizontal():
            yield DataTable(id="list", cursor_type="row", zebra_stripes=True)
            yield TextArea(id="transcript", read_only=True, soft_wrap=True)
        yield Static("", id="status")  # what a key did: the resume command, a copied label
        yield Footer()

    def on_mount(self) -> None:
        self.show_sessions()
        self.query_one("#list", DataTable).focus()

    # -- the list ---------------------------------------------------------------------------

    def show_sessions(self) -> None:
        from tracehouse.reports.filters import list_sessions

        table = self._table("label", "agent", "project", "updated", "tokens", "title")
        self.rows = []
        for s in list_sessions(self.store, limit=LISTED):
            self.rows.append(Row(str(s["label"]), str(s["session_id"])))
            table.add_row(*_cells(
                s["label"], s["source_provider"], _cut(s.get("project"), 16),
                local_time(s.get("updated_at")) or "", f"{int(s.get('total_tokens') or 0):,}",
                _cut(s.get("title"), 60),
            ))  # fmt: skip
        self._open_first()

    def show_hits(self, query: str) -> None:
        from tracehouse.reports import searching

        try:
            answer = searching.search(
                self.store, query, SearchFilters(limit=HITS), embeddings=self.embeddings
            )
        except TracehouseError as error:  # a query still being typed: `-` alone, say
            self.notify(str(error), severity="warning", timeout=2, markup=False)
            return
        table = self._table("label", "kind", "when", "hit")
        self.rows = []
        for hit in answer.hits:
            at = hit.message_id or (hit.id if hit.kind == "tool" else None)
            self.rows.append(Row(hit.label, hit.session_id, at))
            plain = hit.snippet.replace(MARK[0], "").replace(MARK[1], "")
            table.add_row(*_cells(hit.label, hit.kind, local_time(hit.created_at) or "",
                                  _cut(plain, 80)))  # fmt: skip
        self._open_first()

    def _table(self, *columns: str) -> DataTable[Any]:
        table = self.query_one("#list", DataTable)
        table.clear(columns=True)
        table.add_columns(*columns)
        return table

    def _open_first(self) -> None:
        if self.rows:
            self.open_row(self.rows[0])
        else:
            self.query_one("#transcript", TextArea).load_text("")

    # -- the transcript ---------------------------------------------------------------------

    def open_row(self, row: Row) -> None:
        from tracehouse.exports.transcript import focus, render
        from tracehouse.store.reads import session_detail

        detail = session_detail(self.store, row.session_id)
        if row.at is not None:
            with suppress(LookupError):  # a hit in a part the transcript folds: the whole one
                detail = focus(detail, row.at)
        self.shown = row
        text = escaped(render(detail, show_thinking=self.thinking))
        area = self.query_one("#transcript", TextArea)
        area.load_text(text)
        # at a hit, its message (`▶`, as `sessions show --at` marks it) at the top
        marked = next((n for n, line in enumerate(text.splitlines()) if line.startswith("▶")), 0)
        area.scroll_to(y=0, animate=False)
        if marked:
            area.move_cursor((marked, 0))
            area.scroll_cursor_visible(center=False, animate=False)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if 0 <= event.cursor_row < len(self.rows):
            self.open_row(self.rows[event.cursor_row])

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.query_one("#transcript", TextArea).focus()

    # -- search as you type -----------------------------------------------------------------

    def on_input_changed(self, event: Input.Changed) -> None:
        typed = event.value
        self.set_timer(TYPED_PAUSE, lambda: self._searched(typed))

    def _searched(self, typed: str) -> None:
        if typed != self.query_one("#query", Input).value:
            return  # more was typed since: that search will run
        if typed.strip():
            self.show_hits(typed)
        else:
            self.show_sessions()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.query_one("#list", DataTable).focus()

    # -- keys -------------------------------------------------------------------------------

    def action_search(self) -> None:
        self.query_one("#query", Input).focus()

    def action_to_list(self) -> None:
        query = self.query_one("#query", Input)
        if query.value:
            query.value = ""
        self.query_one("#list", DataTable).focus()

    def action_resume(self) -> None:
        from tracehouse.resume.plan import hint

        if self.shown is None:
            return
        rows = self.store.query(
            "SELECT * FROM sessions WHERE session_id = ?", [self.shown.session_id]
        )
        if rows:
            self.last_hint = hint(rows[0])
            self.say(self.last_hint)

    def action_run_resume(self) -> None:
        """Run the resume command `r` shows, in this terminal: browse steps aside while the
        agent runs and comes back when it exits."""
        import shlex

        self.action_resume()
        if not self.last_hint:
            return
        argv = shlex.split(self.last_hint)  # built as an argument list and quoted (shown.py)
        cwd = None
        if argv[:1] == ["cd"] and "&&" in argv:  # the agent's own command, run where it ran
            cwd, argv = argv[1], argv[argv.index("&&") + 1 :]
        try:
            with self.suspend():
                try:
                    subprocess.run(argv, cwd=cwd, check=False)
                except OSError as error:
                    print(f"tracehouse browse: {argv[0]}: {error}", file=sys.stderr)
        except SuspendNotSupported:  # no terminal to hand over (a test's, a web one)
            self.say(f"cannot step aside here; run it yourself: {self.last_hint}")
            return
        self.say(f"ran: {self.last_hint}")

    def action_copy(self) -> None:
        if self.shown is not None:
            self.copy_to_clipboard(self.shown.label)
            self.say(f"copied {self.shown.label}")

    def on_unmount(self) -> None:
        """The views `o` opened stop with the browser's terminal UI: none is left serving."""
        for process in self.opened:
            process.terminate()
        for process in self.opened:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()

    def action_browser(self) -> None:
        """The session in the browser: `tracehouse open LABEL`, running until browse quits."""
        if self.shown is None:
            return
        from tracehouse.model.labels import reference

        # the label where it has a label's safe shape (a row from elsewhere may not): never an
        # option, whatever the ledger holds
        named = reference(self.shown.label, self.shown.session_id)
        command = [sys.executable, "-m", "tracehouse.cli.app", "open", named,
                   "--store", self.store_flag]  # fmt: skip
        # In browse's own process group: a terminal that closes takes it along too.
        self.opened.append(subprocess.Popen(command, stdin=subprocess.DEVNULL,
                                            stdout=subprocess.DEVNULL,
                                            stderr=subprocess.DEVNULL))  # fmt: skip
        self.say(f"opening {self.shown.label} in the browser (tracehouse open)")

    def say(self, line: str) -> None:
        self.query_one("#status", Static).update(Text(line))

    def action_thinking(self) -> None:
        self.thinking = not self.thinking
        if self.shown is not None:
            self.open_row(self.shown)


def _cells(*values: object) -> list[Text]:
    """A row's cells as plain text: a DataTable reads a string as Rich markup, and what a
    ledger holds is shown, never interpreted (control characters escaped too)."""
    return [Text(escaped(str(v))) for v in values]


def _cut(text: object, width: int) -> str:
    shown = " ".join(str(text or "").split())
    return shown if len(shown) <= width else shown[: width - 1] + "…"
