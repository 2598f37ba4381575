"""The user's source text of an instruction, and a break or fallback reason told with it.

A reason is read next to the user's code, so it quotes the expression that caused it AS WRITTEN:
"`h.numpy()` reads a tensor's value into Python". The instruction's source positions (line, end
line, column, end column: `co_positions()`) cut the expression out of the file (linecache); a
compound statement (a `for` loop, a class) is quoted by its header; without columns the whole line
stands for it, without a source file nothing is quoted.
"""
from __future__ import annotations

import io
import linecache
import tokenize
import types
from typing import Any

from sot.opcode_executor import Unsupported
from sot.opcode_executor.wording import construct

__all__ = ["quoted", "told", "said", "saying"]

_LONGEST = 72  # characters of an expression quoted whole; a longer one is cut with "..."


def quoted(code: types.CodeType, instruction: Any) -> str | None:
    """The source text `instruction` of `code` runs, whitespace collapsed to single spaces (None: no
    source to read)."""
    pos = instruction.positions
    first = pos.lineno if pos is not None and pos.lineno is not None else instruction.lineno
    if first is None:
        return None
    if instruction.opname in ("GET_ITER", "FOR_ITER"):  # a loop's: the iterable or the whole loop, by version
        header = _without_comments(linecache.getline(code.co_filename, first)).strip()
        if header.startswith(("for ", "async for ")) and header.endswith(":"):
            return _shortened(" ".join(header[:-1].split()))
    last = pos.end_lineno if pos is not None and pos.end_lineno is not None else first
    lines = [linecache.getline(code.co_filename, n).encode() for n in range(first, last + 1)]
    if not any(lines):
        return None
    if pos is not None and pos.col_offset is not None and pos.end_col_offset is not None:
        # columns are UTF-8 byte offsets (cut the end first: on one line both cut the same bytes)
        lines[-1] = lines[-1][:pos.end_col_offset]
        lines[0] = lines[0][pos.col_offset:]
    source = _without_comments(b"".join(lines).decode(errors="replace")).strip()
    head = source.split("\n", 1)[0].rstrip()
    if "\n" in source and head.endswith(":"):  # a compound statement (a for loop, a class): its header says it
        source = head[:-1]
    return _shortened(" ".join(source.split()))


def _shortened(text: str) -> str:
    """`text`, cut with "..." past `_LONGEST` characters."""
    return text if len(text) <= _LONGEST else text[:_LONGEST - 3] + "..."


def _without_comments(text: str) -> str:
    """`text` without its comments (a statement spanning lines, a class, quotes its body's); as it is when
    it does not tokenize alone."""
    lines = text.splitlines(keepends=True)
    try:
        comments = [t for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type == tokenize.COMMENT]
    except (tokenize.TokenError, SyntaxError):
        return text
    for t in reversed(comments):
        row, col = t.start
        lines[row - 1] = lines[row - 1][:col] + lines[row - 1][t.end[1]:]
    return "".join(lines)


def told(error: Unsupported) -> str:
    """What `error` says happened, in the user's terms, led by the expression it happened at."""
    return saying(error.at, said(error))


def said(error: Unsupported) -> str:
    """What `error` says its expression does (a verb phrase): its detail, or the construct its opcode
    without a handler comes from."""
    return error.detail or f"uses {construct(error.opname)}, which sot cannot translate yet"


def saying(at: tuple[types.CodeType, Any] | None, does: str) -> str:
    """`does` (a verb phrase) said of the expression the instruction `at` (code, instruction) runs."""
    text = quoted(*at) if at is not None else None
    return f"`{text}` {does}" if text else f"this line {does}"
