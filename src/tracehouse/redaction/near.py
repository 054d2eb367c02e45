"""Secrets named by a word near them: `my AWS secret access key is Tq8v…oKiY.`,
`数据库密码是Zq81…。`, `AZURE_STORAGE_KEY%3D…`.

A password, a bare AWS secret key or an account key says nothing of itself; what makes it a
secret is the word before it. The detection library finds the words (`tracehouse.secret-word`
in `rules.yml`): it scans at hundreds of MB/s for literals, and a rule that also described the
value cost twice its whole catalog. The value is read here, after each word: the first run of
value characters that starts within `REACH` bytes of the word, on its line, and looks random.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter

REACH = 40  # bytes between the word and its value, at most
LONGEST = 200
WORD_RULE = "tracehouse.secret-word"
# A value's characters; one starts only after a character that cannot continue it, so the
# tail of an identifier (`secretKeyRef2`) is never a value.
_VALUE = re.compile(
    rb"(?<![A-Za-z0-9!#$%&*+./<>?@^_~-])[A-Za-z0-9!#%&*+/<>?@^_~-][A-Za-z0-9!#$%&*+./<>?@^_~=-]{7,199}"
)
# What separates a word from its value once percent-encoded (`=`, `"`, a space, `:`): blanked
# in place, so offsets stay the buffer's.
_ENCODED_SEPARATOR = re.compile(rb"%(?:3[DdAa]|2[026])")
# Words after which a key of letters and digits alone is a secret too (a hex API key).
_KEY_WORD = re.compile(
    rb"(?i)key|token|\xe5\xaf\x86\xe9\x92\xa5|\xe4\xbb\xa4\xe7\x89\x8c"  # 密钥, 令牌
)
_ALNUM = re.compile(rb"[A-Za-z0-9]{24,128}")


def value_after(data: bytes, start: int, end: int) -> tuple[int, int] | None:
    """The byte span of the secret a word at `data[start:end]` names, or None. The word's last
    byte stays in the window, so a value glued to a Latin word is seen as the word's tail."""
    word = data[start:end]
    window = data[end - 1 : end + REACH + LONGEST]
    for line_end in (b"\n", b"\\n"):  # a line's end, or one escaped in JSON text
        cut = window.find(line_end)
        if cut != -1:
            window = window[:cut]
    window = _ENCODED_SEPARATOR.sub(lambda m: b" " * len(m.group()), window)
    for found in _VALUE.finditer(window, 1):  # from the byte after the word, which it sees
        if found.start() > REACH + 1:
            return None
        value = found.group().rstrip(b".")  # a value that ends a sentence: not its full stop
        if looks_secret(value, bool(_KEY_WORD.search(word))):
            at = end - 1 + found.start()
            return at, at + len(value)
    return None


def looks_secret(value: bytes, after_key_word: bool) -> bool:
    """Random-looking: at least 3 bits a character, and mixed case with a digit (a word, a
    lower-case hash, a UUID, a timestamp or a path of one case is not); after a key's name,
    24 or more letters and digits with two digits among them will do (a hex API key)."""
    if len(value) < 8 or _entropy(value) < 3.0:
        return False
    digits = sum(ch in b"0123456789" for ch in value)
    if digits and any(65 <= ch <= 90 for ch in value) and any(97 <= ch <= 122 for ch in value):
        return True
    return after_key_word and digits >= 2 and _ALNUM.fullmatch(value) is not None


def decoded(data: bytes, start: int, end: int) -> bytes | None:
    """The text a base64 run holds (the library found a word inside it)."""
    try:
        return base64.b64decode(data[start:end] + b"=" * (-(end - start) % 4))
    except (binascii.Error, ValueError):
        return None


def _entropy(value: bytes) -> float:
    counts = Counter(value)
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values())
