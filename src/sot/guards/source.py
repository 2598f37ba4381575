"""Source expressions: where a guarded value is read from in a new frame.

A source is Python expression text over the three names `f_locals`, `f_globals` and
`f_builtins` (builtin names such as `len` may appear too), e.g. `f_locals['self'].fc1.weight`.
The opcode executor's Trackers write them; guards carry them as data. Here a source is parsed
once into a chain of steps (`f_locals['self']` → `.fc1` → `.weight`), so that the code
generator can bind every shared prefix to one local variable, and the careful evaluator
(`Scope`) can evaluate each prefix at most once per lookup. Nodes that are not attribute reads
or subscripts by a constant (calls, arithmetic) are atomic: evaluated whole.
"""
from __future__ import annotations

import ast
import builtins
import re
from typing import Any, Mapping

__all__ = ["ROOTS", "PLACEHOLDER", "Source", "parse_source", "Scope", "Raised"]

ROOTS = ("f_locals", "f_globals", "f_builtins")
# Marks where a step's parent value goes in its text; never valid Python, never in a repr.
PLACEHOLDER = "\x00"
_ROOT_STEMS = {"f_locals": "L", "f_globals": "G", "f_builtins": "B"}
_BUILTIN_NAMES = frozenset(dir(builtins))


class Source:
    """One parsed source expression: its canonical text, the prefix it reads from, the step."""

    __slots__ = ("text", "parent", "step", "stem", "_step_code", "_whole_code")

    def __init__(self, text: str, parent: "Source | None", step: str, stem: str):
        self.text = text
        self.parent = parent
        self.step = step
        self.stem = stem
        self._step_code = None
        self._whole_code = None

    @property
    def is_root(self) -> bool:
        """True for `f_locals`, `f_globals`, `f_builtins` themselves (the check's arguments)."""
        return self.parent is None and self.text in ROOTS

    def chain(self) -> list["Source"]:
        """This source and its prefixes, outermost first, roots excluded."""
        out, s = [], self
        while s is not None and not s.is_root:
            out.append(s)
            s = s.parent
        return out

    def render(self, parent_code: str) -> str:
        """The expression text of this step applied to `parent_code`."""
        return self.step.replace(PLACEHOLDER, parent_code)

    def __repr__(self) -> str:
        return f"Source({self.text!r})"


_cache: dict[str, Source] = {}


def parse_source(text: str) -> Source:
    """The parsed (and interned) Source of expression `text`; ValueError if it is not one."""
    hit = _cache.get(text)
    if hit is not None:
        return hit
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as e:
        raise ValueError(f"guard source {text!r} is not a Python expression: {e.msg}") from None
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id not in ROOTS and node.id not in _BUILTIN_NAMES:
            raise ValueError(f"guard source {text!r} reads {node.id!r}; a source may only read "
                             f"{', '.join(ROOTS)} and builtins")
        if isinstance(node, (ast.NamedExpr, ast.Lambda, ast.Await, ast.Yield, ast.YieldFrom)):
            raise ValueError(f"guard source {text!r}: {type(node).__name__} is not allowed")
    src = _build(tree)
    _cache[text] = src
    return src


def _build(node: ast.expr) -> Source:
    text = ast.unparse(node)
    hit = _cache.get(text)
    if hit is not None:
        return hit
    if isinstance(node, ast.Name) and node.id in ROOTS:
        src = Source(text, None, text, _ROOT_STEMS[node.id])
    elif isinstance(node, ast.Attribute):
        parent = _build(node.value)
        src = Source(text, parent, f"{PLACEHOLDER}.{node.attr}", _stem(parent, node.attr))
    elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        parent = _build(node.value)
        key = node.slice.value
        src = Source(text, parent, f"{PLACEHOLDER}[{key!r}]", _stem(parent, str(key)))
    else:
        src = Source(text, None, text, "E")
    _cache[text] = src
    return src


def _stem(parent: Source, part: str) -> str:
    part = re.sub(r"\W", "_", part) or "_"
    return f"{parent.stem}_{part}"


class Raised:
    """The exception a source or check raised, kept in place of a value."""

    __slots__ = ("exc",)

    def __init__(self, exc: BaseException):
        self.exc = exc

    def __repr__(self) -> str:
        return f"raised {type(self.exc).__name__}: {self.exc}"


class Scope:
    """Careful evaluation of sources in one frame: each prefix at most once, exceptions kept."""

    __slots__ = ("roots", "memo")

    def __init__(self, f_locals: Mapping, f_globals: Mapping, f_builtins: Mapping,
                 known: Mapping[str, Any] | None = None):
        self.roots = {"f_locals": f_locals, "f_globals": f_globals, "f_builtins": f_builtins}
        self.memo: dict[str, Any] = dict(known) if known else {}

    def value(self, src: Source) -> Any:
        """The value of `src` in this frame, or a `Raised` if reading it raised."""
        if src.is_root:
            return self.roots[src.text]
        memo = self.memo
        if src.text in memo:
            return memo[src.text]
        if src.parent is None:
            if src._whole_code is None:
                src._whole_code = compile(src.text, "<guard source>", "eval")
            env = dict(self.roots)
            val = _eval(src._whole_code, env)
        else:
            parent = self.value(src.parent)
            if isinstance(parent, Raised):
                val = parent
            else:
                if src._step_code is None:
                    src._step_code = compile(src.render("_p"), "<guard source>", "eval")
                val = _eval(src._step_code, {"_p": parent})
        memo[src.text] = val
        return val


def _eval(code, env: dict) -> Any:
    env["__builtins__"] = builtins
    try:
        return eval(code, env)  # noqa: S307 - guard sources are validated expressions over frames
    except Exception as e:  # noqa: BLE001 - a source that cannot be read fails its guard
        return Raised(e)
