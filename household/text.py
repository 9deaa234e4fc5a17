"""Text from files made safe to show: one definition for the CLI's echo and the Markdown reports."""

from __future__ import annotations

import unicodedata


def printable(text: object) -> str:
    """``text`` safe to echo to a terminal or to write into a report a person will ``cat``:
    control and format characters (ESC sequences that recolour, retitle or clear the terminal, bidi
    overrides that reorder what is shown, a bare CR that overwrites the line) are shown escaped,
    e.g. ``\\x1b[2J``; newlines and tabs stay. Episode ids, instructions and messages quoting them
    come from files (issue 32)."""
    out = str(text)
    if out.isprintable():
        return out
    return "".join(c if c in "\n\t" or unicodedata.category(c) not in ("Cc", "Cf", "Cs", "Co")
                   else (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}" if ord(c) < 0x10000
                         else f"\\U{ord(c):08x}")
                   for c in out)
