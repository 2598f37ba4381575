"""Sources: where a guarded value is read from in a new frame, as a chain of steps.

The opcode executor's Trackers build a source step by step, as objects: a root read
(`F_LOCALS.item('self')`, `F_GLOBALS.item(name)`, `F_BUILTINS.item(name)`), then `.attr(name)` and
`.item(key)` steps, each a child of its parent's Source. What is not such a read (`type(x)`,
`hasattr(x, 'k')`, `a is b`) is an atomic `expression`, evaluated whole. The chain lets the code
generator bind every shared prefix to one local variable, and the careful evaluator (`Scope`)
evaluate each prefix at most once per lookup.

A source's `text` is the Python expression it stands for (`f_locals['self'].fc1.weight`), derived
from its steps: it names the source in guard dumps, miss reports and logs, and sources compare and
hash by it. Translations never parse text; `parse_source` is for guards written by hand
(`Guard("f_locals['x']", ...)`, tests and benchmarks).
"""
from __future__ import annotations

import ast
import builtins
import keyword
import math
import re
from typing import Any, Mapping

__all__ = ["ROOTS", "PLACEHOLDER", "Source", "F_LOCALS", "F_GLOBALS", "F_BUILTINS", "expression", "parse_source",
           "Scope", "Raised", "step_value"]

ROOTS = ("f_locals", "f_globals", "f_builtins")
# Marks where a step's parent value goes in its text; never valid Python, never in a repr.
PLACEHOLDER = "\x00"
_BUILTIN_NAMES = frozenset(dir(builtins))
_NON_WORD = re.compile(r"\W")


class Source:
    """One source expression: its text, the prefix it reads from (`parent`) and the step from there.

    `kind` says what the step does to its parent's value: "attr" reads attribute `key`, "item" item
    `key` (a constant), "call" calls method `key` with no arguments (a NumPy scalar's `.item()`),
    "type" takes its exact type (where a method or class attribute is looked up). A root
    (`f_locals`, kind "root") and an atomic expression ("expr") have no parent: `step` is their whole
    text and `key` the stem of the generated code's locals that read from them.
    """

    __slots__ = ("text", "parent", "step", "kind", "key", "is_root", "_stem", "_code")

    def __init__(self, text: str, parent: "Source | None", step: str, kind: str, key: Any):
        self.text = text
        self.parent = parent
        self.step = step
        self.kind = kind
        self.key = key
        self.is_root = kind == "root"  # `f_locals`, `f_globals`, `f_builtins` themselves (the check's arguments)
        self._stem = None
        self._code = None  # an atomic expression, compiled when first evaluated

    def attr(self, name: str) -> "Source":
        """The source of attribute `name` of this source's value."""
        if name.isidentifier() and not keyword.iskeyword(name):
            step = f"{PLACEHOLDER}.{name}"
        else:  # set with setattr: `x.<name>` would not be Python
            step = f"getattr({PLACEHOLDER}, {name!r})"
        return Source(step.replace(PLACEHOLDER, self.text), self, step, "attr", name)

    def item(self, key: Any) -> "Source":
        """The source of `value[key]` for a constant `key` (None, bool, int, float, str, bytes, Ellipsis)."""
        step = f"{PLACEHOLDER}[{_literal(key)}]"
        if type(key) is float and key != key:
            key = float("nan")  # a NaN no mapping holds, as the generated code's `float('nan')`
        return Source(step.replace(PLACEHOLDER, self.text), self, step, "item", key)

    def call(self, method: str) -> "Source":
        """The source of `value.method()`, a method that takes no arguments and changes nothing."""
        step = f"{PLACEHOLDER}.{method}()"
        return Source(step.replace(PLACEHOLDER, self.text), self, step, "call", method)

    def type(self) -> "Source":
        """The source of `type(value)`."""
        step = f"type({PLACEHOLDER})"
        return Source(step.replace(PLACEHOLDER, self.text), self, step, "type", "type")

    @property
    def stem(self) -> str:
        """A readable identifier after the path (`L_self_fc1`): the generated code's local for it."""
        if self._stem is None:
            self._stem = self.key if self.parent is None else \
                f"{self.parent.stem}_{_NON_WORD.sub('_', str(self.key)) or '_'}"
        return self._stem

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

    def __eq__(self, other: object) -> bool:
        return self is other or (isinstance(other, Source) and self.text == other.text)

    def __hash__(self) -> int:
        return hash(self.text)

    def __lt__(self, other: "Source") -> bool:
        return self.text < other.text

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Source({self.text!r})"


F_LOCALS = Source("f_locals", None, "f_locals", "root", "L")
F_GLOBALS = Source("f_globals", None, "f_globals", "root", "G")
F_BUILTINS = Source("f_builtins", None, "f_builtins", "root", "B")
_ROOT_SOURCES = {s.text: s for s in (F_LOCALS, F_GLOBALS, F_BUILTINS)}


def expression(text: str) -> Source:
    """An atomic source: Python expression `text` over `f_locals`, `f_globals`, `f_builtins` and builtins,
    evaluated whole (written by the executor from other sources' text, e.g. `f"hasattr({src}, 'k')"`). One
    used as a prefix of `.attr`/`.item` must be a call or otherwise bind tighter than them."""
    return Source(text, None, text, "expr", "E")


def _literal(key: Any) -> str:
    """Python text evaluating to the constant `key` (repr, but for floats with no literal)."""
    if type(key) is float and not math.isfinite(key):
        return "float('nan')" if math.isnan(key) else ("float('inf')" if key > 0 else "-float('inf')")
    return repr(key)


def parse_source(text: str) -> Source:
    """The Source of expression `text`, for guards written by hand; ValueError if it is not one."""
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
    return _build(tree)


def _build(node: ast.expr) -> Source:
    if isinstance(node, ast.Name) and node.id in ROOTS:
        return _ROOT_SOURCES[node.id]
    if isinstance(node, ast.Attribute):
        return _build(node.value).attr(node.attr)
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        return _build(node.value).item(node.slice.value)
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "type"
            and len(node.args) == 1 and not node.keywords and not isinstance(node.args[0], ast.Starred)):
        return _build(node.args[0]).type()
    return expression(ast.unparse(node))


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
            if src._code is None:
                src._code = compile(src.text, "<guard source>", "eval")
            val = _eval(src._code, {**self.roots, "__builtins__": builtins})
        else:
            parent = self.value(src.parent)
            val = parent if isinstance(parent, Raised) else step_value(parent, src)
        memo[src.text] = val
        return val


def step_value(parent: Any, src: Source) -> Any:
    """What the generated code's step (`parent.key`, `parent[key]`, `parent.key()`, `type(parent)`) gives,
    or `Raised`."""
    try:
        if src.kind == "item":
            return parent[src.key]
        if src.kind == "type":
            return type(parent)
        value = getattr(parent, src.key)
        return value() if src.kind == "call" else value
    except Exception as e:  # noqa: BLE001 - a source that cannot be read fails its guard
        return Raised(e)


def _eval(code: Any, env: dict) -> Any:
    try:
        return eval(code, env)  # noqa: S307 - guard sources are validated expressions over frames
    except Exception as e:  # noqa: BLE001 - a source that cannot be read fails its guard
        return Raised(e)
