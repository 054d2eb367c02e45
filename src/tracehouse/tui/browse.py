"""`tracehouse browse`: the ledger in the terminal — the sessions, search as you type, a
transcript beside them, and the keys that act on a session.

A thin layer over a `Reader` (`tui/readers.py`): a ledger on this machine read through the
library as the CLI reads it, or a gateway's read API. Keyboard first: `/` searches (hybrid where
the ledger holds vectors), the arrows move, `enter` opens, `f` lists the session's family (its
parent, its subagents and threads) to walk through, `r` shows how to resume (`R` runs it, browse
stepping aside until the agent exits), `y` copies the label, `e` exports the session as Markdown,
`o` opens it in the browser (`tracehouse open`, until browse quits), `t` unfolds thinking,
`escape` goes back to the list, `q` quits; `ctrl+p` offers Textual's commands, its light and dark
themes among them. The mouse works too.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual.app import App, ComposeResult, SuspendNotSupported
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.widgets import DataTable, Footer, Input, Static

from tracehouse.errors import TracehouseError
from tracehouse.exports.selection import FILE_MODE
from tracehouse.model.labels import SAFE_LABEL, reference
from tracehouse.shown import escaped
from tracehouse.timespec import local_time
from tracehouse.tui.readers import ORDERS, Listed, Listing, Opened, Reader
from tracehouse.tui.transcript_view import TranscriptView

COSTS_AFTER = 0.4  # seconds after a list is shown: its costs do not hold up the first screen
TYPED_PAUSE = 0.15  # seconds a query rests before it is searched: typing is not interrupted


@dataclass(frozen=True)
class Row:
    """What a row of the table stands for: a session, and where a hit opens it."""

    label: str
    session_id: str
    at: str | None = None


class Browse(App[None]):
    TITLE = "tracehouse"
    AUTO_FOCUS = "#list"  # keys typed while it starts go to the list, never into the search box
    CSS = """
    #query { height: 3; }
    #list { width: 1fr; min-width: 30; }
    #transcript { width: 2fr; }
    #status { height: 1; padding: 0 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("/", "search", "Search"),
        Binding("escape", "to_list", "List"),
        Binding("f", "family", "Family"),
        Binding("s", "sort", "Sort"),
        Binding("R", "run_resume", "Run it", show=False),  # before `r`, which also hears R
        Binding("r", "resume", "Resume"),
        Binding("y", "copy", "Copy label"),
        Binding("e", "export", "Export"),
        Binding("o", "browser", "Browser"),
        Binding("t", "thinking", "Thinking"),
        Binding("q", "quit", "Quit"),
    ]

    def __init__(
        self,
        reader: Reader,
        store_flag: str = "",
        theme: str | None = None,
        listing: Listing | None = None,
    ) -> None:
        super().__init__()
        self.reader = reader
        self.listing = listing or Listing()  # the options' filters; `s` changes the order
        self.sub_title = reader.shown  # the ledger, as the other commands show it
        self.store_flag = store_flag  # `--store` as given, for the commands it starts
        if theme is not None:
            self.theme = theme
        self.rows: list[Row] = []
        self.shown: Row | None = None
        self.opened_now: Opened | None = None
        self.thinking = False
        self.last_hint: str | None = None
        self.opened: list[subprocess.Popen[bytes]] = []  # `tracehouse open`s `o` started

    def compose(self) -> ComposeResult:
        yield Input(placeholder="search — words, or a question (/)", id="query")
        with Horizontal():
            yield DataTable(id="list", cursor_type="row", zebra_stripes=True)
            yield TranscriptView(id="transcript")
        yield Static("", id="status")  # what a key did: the resume command, a copied label
        yield Footer()

    def on_mount(self) -> None:
        self.show_sessions()
        # the price table, read in a thread once the first screen is drawn, not while it is
        self.call_after_refresh(self.run_worker, self.reader.prepare, thread=True,
                                exit_on_error=False)  # fmt: skip
        self.query_one("#list", DataTable).focus()

    # -- the list ---------------------------------------------------------------------------

    def show_sessions(self) -> None:
        listed = self._answered(lambda: self.reader.sessions(self.listing)) or []
        self._list(listed)
        if listed:  # what they cost, once the first screen is drawn and the prices are read
            self.set_timer(COSTS_AFTER, lambda: self._show_costs(listed))

    def _list(self, sessions: list[Listed], marks: dict[str, str] | None = None) -> None:
        """`marks`: a sign before a label (the family's `↑` parent, `↳` children). The machine
        is shown where the sessions come from more than one (a team's gateway, a ledger fed by
        several laptops): each column shown costs every row drawn."""
        machines = len({s.host for s in sessions}) > 1
        columns = ["label", "agent", *(["machine"] if machines else []), "project", "updated",
                   "tokens", "cost", "title"]  # fmt: skip
        table = self._table(*columns)
        self.rows = []
        for s in sessions:
            self.rows.append(Row(s.label, s.session_id))
            cells = [(marks or {}).get(s.session_id, "") + s.label, s.provider,
                     *([_cut(s.host, 16)] if machines else []), _cut(s.project, 16),
                     local_time(s.updated_at) or "", f"{s.tokens:,}", "",
                     _cut(s.title, 60)]  # fmt: skip
            table.add_row(*_cells(*cells), key=s.session_id)
        self._open_first()

    def _show_costs(self, listed: list[Listed]) -> None:
        costs = self._answered(lambda: self.reader.costs(self.listing, listed), quiet=True)
        table = self.query_one("#list", DataTable)
        if costs is None or [r.session_id for r in self.rows] != [s.session_id for s in listed]:
            return  # another list since (a search, a family)
        for s in listed:
            cost = costs.get(s.label)
            shown = "" if s.label not in costs else "?" if cost is None else f"${cost:,.2f}"
            table.update_cell(s.session_id, "cost", Text(shown))

    def show_hits(self, query: str) -> None:
        hits = self._answered(lambda: self.reader.search(query), quiet=True)
        if hits is None:  # a query still being typed: `-` alone, say
            return
        table = self._table("label", "kind", "when", "hit")
        self.rows = []
        for hit in hits:
            self.rows.append(Row(hit.label, hit.session_id, hit.at))
            table.add_row(*_cells(hit.label, hit.kind, local_time(hit.created_at) or "",
                                  _cut(hit.snippet, 80)), key=str(len(self.rows)))  # fmt: skip
        self._open_first()

    def _table(self, *columns: str) -> DataTable[Any]:
        table = self.query_one("#list", DataTable)
        table.clear(columns=True)
        for column in columns:
            table.add_column(column, key=column)
        return table

    def _open_first(self) -> None:
        if self.rows:
            self.open_row(self.rows[0])
        else:
            self.query_one("#transcript", TranscriptView).load_text("")

    def _answered(self, read: Any, *, quiet: bool = False) -> Any:
        """What `read()` answers; an error (a gateway gone, a query not yet whole) is said, and
        browse goes on."""
        try:
            return read()
        except TracehouseError as error:
            self.notify(str(error), severity="warning", timeout=2 if quiet else 8, markup=False)
            return None

    # -- the transcript ---------------------------------------------------------------------

    def open_row(self, row: Row) -> None:
        opened = self._answered(
            lambda: self.reader.open(row.session_id, at=row.at, thinking=self.thinking)
        )
        if opened is None:
            return
        self.shown, self.opened_now = row, opened
        text = escaped(opened.text)
        # at a hit, its message (`▶`, as `sessions show --at` marks it) at the top
        marked = next((n for n, line in enumerate(text.splitlines()) if line.startswith("▶")), 0)
        self.query_one("#transcript", TranscriptView).load_text(text, at_line=marked)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        # a new list's first row is open already: its highlight does not read it again
        if 0 <= event.cursor_row < len(self.rows) and self.rows[event.cursor_row] != self.shown:
            self.open_row(self.rows[event.cursor_row])

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.query_one("#transcript", TranscriptView).focus()

    # -- search as you type -----------------------------------------------------------------

    def on_input_changed(self, event: Input.Changed) -> None:
        typed = event.value
        self.set_timer(TYPED_PAUSE, lambda: self._searched(typed))

    def _searched(self, typed: str) -> None:
        query = next(iter(self.query("#query").results(Input)), None)
        if query is None or typed != query.value:
            return  # quitting (the pause ended as the screen went), or more typed since
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
        else:
            self.show_sessions()  # back from a family to the sessions
        self.query_one("#list", DataTable).focus()

    def action_sort(self) -> None:
        """The sessions in the next order: most recently updated, created, most tokens, most
        messages (the whole ledger's, not only the ones listed)."""
        order = ORDERS[(ORDERS.index(self.listing.order) + 1) % len(ORDERS)]
        self.listing = replace(self.listing, order=order)
        query = self.query_one("#query", Input)
        if query.value:
            query.value = ""  # the sessions come back once it rests
        else:
            self.show_sessions()
        self.say(f"sessions by {order} (s: another order)")

    def action_family(self) -> None:
        """The list becomes the session's family: its parent (`↑`), itself, its subagents and
        threads (`↳`); `f` on one of them walks on, `escape` comes back."""
        opened = self.opened_now
        if opened is None:
            return
        above = [opened.parent] if opened.parent is not None else []
        marks = {s.session_id: "↑ " for s in above}
        marks.update((c.session_id, "↳ ") for c in opened.children)
        current = opened.session
        self._list([*above, current, *opened.children], marks)
        at = len(above)  # the cursor stays on the session it was on
        self.query_one("#list", DataTable).move_cursor(row=at)
        parent = "its parent ↑" if above else "no parent"
        self.say(f"{current.label}: {parent}, {len(opened.children)} subagents and threads ↳"
                 " (escape: back to the sessions)")  # fmt: skip

    def action_resume(self) -> None:
        from tracehouse.resume.plan import hint

        if self.opened_now is None:
            return
        self.last_hint = hint(self.opened_now.row)
        if not self.reader.local and self.last_hint.startswith("tracehouse resume"):
            self.say(f"{self.last_hint}  (needs the session in a ledger of this machine's)")
        else:
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

    def action_export(self) -> None:
        """The session as Markdown, as `tracehouse export --format markdown` writes it, into a
        new file in the current directory, named by the session's label where that has a
        label's safe shape (else by a hash of its id): never a name the ledger picks."""
        if self.shown is None:
            return
        import xxhash

        shown = self.shown
        text = self._answered(lambda: self.reader.markdown(shown.session_id))
        if text is None:
            return
        stem = shown.label if SAFE_LABEL.fullmatch(shown.label) else (
            "session-" + xxhash.xxh3_64_hexdigest(shown.session_id.encode()))  # fmt: skip
        path = Path.cwd() / f"{stem}.md"
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)  # as `export`
        except FileExistsError:
            self.say(f"{path.name} exists in {Path.cwd()}: not written")
            return
        except OSError as error:
            self.say(f"{path}: {error.strerror or error}; not written")
            return
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        self.say(f"exported {shown.label} to {path}")

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
        """The session in the browser: `tracehouse open LABEL`, running until browse quits; over
        a gateway, its own page for the session (signed in there)."""
        if self.shown is None:
            return
        # the label where it has a label's safe shape (a row from elsewhere may not), else the
        # id: an operand after `--`, never an option, whatever the ledger holds
        named = reference(self.shown.label, self.shown.session_id)
        if not self.reader.local:
            import webbrowser
            from urllib.parse import quote

            page = f"{self.reader.shown.rstrip('/')}/s/{quote(named, safe='')}"
            webbrowser.open(page)
            self.say(f"opening {page}")
            return
        command = [sys.executable, "-m", "tracehouse.cli.app", "open", "--store",
                   self.store_flag, "--", named]  # fmt: skip
        # In browse's own process group: a terminal that closes takes it along too.
        self.opened.append(subprocess.Popen(command, stdin=subprocess.DEVNULL,
                                            stdout=subprocess.DEVNULL,
                                            stderr=subprocess.DEVNULL))  # fmt: skip
        self.say(f"opening {self.shown.label} in the browser (tracehouse open)")

    def say(self, line: str) -> None:
        self.query_one("#status", Static).update(Text(escaped(line)))

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
