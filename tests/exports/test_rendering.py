"""What a transcript's text becomes on a page: Markdown as HTML with nothing unsafe let through,
code highlighted, edits as diffs, long results folded with their size."""

from __future__ import annotations

from tracehouse.exports.rendering import Renderer, edit_diff, folded


def test_nothing_unsafe_gets_through() -> None:
    render = Renderer().markdown
    page = str(
        render(
            '<script>alert(1)</script> <img src=x onerror="alert(1)"> '
            "[a](javascript:alert(1)) ![i](https://example.com/x.png) [ok](https://a.b)"
        )
    )
    assert "<script" not in page and "<img" not in page and 'href="javascript' not in page
    assert "&lt;script&gt;" in page and 'href="https://a.b"' in page and "nofollow" in page


def test_markdown_and_code_render() -> None:
    page = str(
        Renderer().markdown("# T\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```python\nx = 1\n```")
    )
    assert "<h1>T</h1>" in page and "<td>1</td>" in page and 'class="hl-n"' in page


def test_edits_become_diffs() -> None:
    claude = str(edit_diff({"file_path": "/a.py", "old_string": "x = 1", "new_string": "x = 2"}))
    assert '<span class="d-del">-x = 1</span>' in claude and "+++ b/a.py" in claude
    opencode = str(edit_diff('{"filePath": "b.py", "oldString": "y", "newString": "z"}'))
    assert '<span class="d-add">+z</span>' in opencode and "--- a/b.py" in opencode
    written = str(edit_diff({"file_path": "c.py", "content": "one\ntwo"}))
    assert written.count('class="d-add"') == 2
    patch = str(
        edit_diff({"input": "*** Begin Patch\n*** Update File: d.py\n@@\n-a\n+b\n*** End Patch"})
    )
    assert '<span class="d-hunk">@@</span>' in patch
    assert edit_diff({"command": "ls"}) is None and edit_diff(None) is None


def test_long_results_are_folded_with_their_size() -> None:
    assert folded("short") is None
    assert folded("\n".join(["x"] * 40)) == "79 bytes · 40 lines"
    assert folded("y" * 3000) == "2.9 KB · 1 lines"
