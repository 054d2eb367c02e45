"""`segmented`: each character of an unspaced script stands apart as a word, nothing else moves."""

import re

from hypothesis import given
from hypothesis import strategies as st

from tracehouse.search import scripts

# Letters of the unspaced scripts and their marks, beside ASCII, spaces and other scripts.
_CHARS = st.sampled_from(list("聊天记录导出日本語のテキストประเทศไทย\u0e31\u0e48ab1 _-é\n"))


@given(st.text(_CHARS, max_size=40))
def test_each_unspaced_character_gets_a_space_on_either_side(text):
    # The rule as one substitution: a character of an unspaced script (with the marks that
    # follow it) becomes itself between two spaces.
    unit = re.compile(scripts._unit().pattern)
    assert scripts.segmented(text) == unit.sub(r" \g<0> ", text)


def test_text_without_them_is_returned_as_it_is():
    text = "rotate_key in billing/webhooks.py, café"
    assert scripts.segmented(text) is text
    assert scripts.segmented("聊天记录") == " 聊  天  记  录 "
    assert scripts.segmented("ไทย") == " ไ  ท  ย "
