"""Lowering the guards of all entries of one code cache into ONE generated Python function.

The function takes `(f_locals, f_globals, f_builtins)` and returns the id of the first entry
(in the cache's most-recent-hit-first order) whose guards all pass, else what the cache's miss
handler returns (-1). It is a guard tree written as straight-line nested `if`s:

- Entries' guards are put in one global order (guards shared by more entries first, then
  cheaper ones), and entries are inserted into a prefix tree in MRU order, so a guard shared
  by a run of entries is one `if` checked once. An entry may join an earlier branch only if
  it can never match together with the entries it jumps over (`exclusive`), so the first
  match in the tree's order is always the first match in MRU order.
- Single-child chains become one `if a and b and c:`.
- Every source expression and each of its prefixes is bound to a named local the first time
  a path needs it (`:=`) and reused after, so each is evaluated at most once per lookup (and
  what a miss report or the careful evaluator needs is already there); a variable that an
  earlier branch may or may not have bound starts as `_U` and is evaluated only if still `_U`.
- The body runs under one `try`: a source or check that raises (a missing attribute, `len`
  of a non-container) sends the lookup to the cache's careful evaluator, which counts such a
  guard as failed. Zero-cost `try` keeps the common path straight-line.
"""
from __future__ import annotations

import builtins
import re
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable

from .checks import BUILTIN_TYPES, VALUE, describe
from .guard import Guard
from .source import Source

__all__ = ["UNBOUND", "Generated", "Namespace", "generate"]

_INDENT = "    "
_MAX_DEPTH = 48  # nested ifs before the rest of a branch is written path by path


@dataclass
class Generated:
    """A generated guard function with its text and where each of its locals came from."""

    fn: Callable[[Any, Any, Any], int]
    text: str
    var_sources: dict[str, Source] = field(default_factory=dict)


class _Node:
    """A prefix-tree node: one guard, then the entries and sub-branches checked under it."""

    __slots__ = ("guard", "items", "ids")

    def __init__(self, guard: Guard | None):
        self.guard = guard
        self.items: list[_Node | int] = []
        self.ids: set[int] = set()


def _build_tree(entries: list[tuple[int, list[Guard]]], overlaps: Callable[[int, int], bool]) -> _Node:
    root = _Node(None)
    for eid, guards in entries:
        node = root
        for g in guards:
            node.ids.add(eid)
            nxt = None
            for item in reversed(node.items):
                if isinstance(item, _Node) and item.guard == g:
                    nxt = item
                    break
                if any(overlaps(eid, other) for other in (item.ids if isinstance(item, _Node) else (item,))):
                    break
            if nxt is None:
                nxt = _Node(g)
                node.items.append(nxt)
            node = nxt
        node.ids.add(eid)
        node.items.append(eid)
    return root


@dataclass
class _If:
    conds: list[Guard]
    body: list  # _If | int


def _blocks(node: _Node, depth: int = 0) -> list:
    out: list = []
    for item in node.items:
        if isinstance(item, int):
            out.append(item)
            break  # an entry whose guards all passed returns; what follows it here is dead
        conds, n = [item.guard], item
        while len(n.items) == 1 and isinstance(n.items[0], _Node):
            n = n.items[0]
            conds.append(n.guard)
        if depth >= _MAX_DEPTH:  # the tokenizer allows 100 indents: write each path whole
            out.extend(_If(conds + path, [eid]) for path, eid in _paths(n))
        else:
            out.append(_If(conds, _blocks(n, depth + 1)))
    return out


def _paths(node: _Node) -> list[tuple[list[Guard], int]]:
    """Every entry under `node`, in order, with the guards between `node` and it."""
    out: list[tuple[list[Guard], int]] = []
    stack: list[tuple[list[Guard], list]] = [([], list(reversed(node.items)))]
    while stack:
        path, todo = stack[-1]
        if not todo:
            stack.pop()
            continue
        item = todo.pop()
        if isinstance(item, int):
            out.append((path, item))
        else:
            stack.append((path + [item.guard], list(reversed(item.items))))
    return out


class Namespace:
    """The generated function's globals: constants under stable, readable names."""

    def __init__(self) -> None:
        self.ns: dict[str, Any] = {"__builtins__": builtins}
        self._by_id: dict[int, str] = {}
        self.shown: list[tuple[str, Any]] = []

    def name(self, obj: Any, hint: str) -> str:
        hit = self._by_id.get(id(obj))
        if hit is not None:
            return hit
        base = re.sub(r"\W", "_", hint)
        name, n = base, 1
        while name in self.ns or hasattr(builtins, name):
            n += 1
            name = f"{base}_{n}"
        self.ns[name] = obj
        self._by_id[id(obj)] = name
        self.shown.append((name, obj))
        return name

    def type_name(self, t: type) -> str:
        return BUILTIN_TYPES.get(t) or self.name(t, f"T_{t.__name__}")


class _Writer:
    """Renders the statement tree, tracking which locals are bound on each path."""

    def __init__(self, var_names: dict[Source, str], ns: Namespace):
        self.var_names = var_names
        self.ns = ns
        self.lines: list[str] = []
        self.maybe: set[str] = set()

    def ref(self, src: Source, bound: set[str], seen: set[str]) -> str:
        """Code reading `src`: its local if bound here, else binding it (and its prefixes)."""
        if src.is_root:
            return src.text
        var = self.var_names[src]
        if var in bound:
            return var
        inner = f"({src.text})" if src.parent is None else src.render(self.ref(src.parent, bound, seen))
        if var in seen:  # bound by an earlier branch on some paths only
            self.maybe.add(var)
            code = f"({var} if {var} is not _U else ({var} := {inner}))"
        else:
            code = f"({var} := {inner})"
        bound.add(var)
        seen.add(var)
        return code

    def cond(self, c: Guard, bound: set[str], seen: set[str]) -> str:
        pieces = c.check.code(c.expected, self.ns).split(VALUE)
        first = self.ref(c.src, bound, seen)
        name = c.src.text if c.src.is_root else self.var_names[c.src]
        if pieces[0].endswith("(") and pieces[1].startswith(")") and first.startswith(f"({name} :="):
            first = first[1:-1]  # f(x := e) needs no second pair of parentheses
        return pieces[0] + first + pieces[1] + "".join(name + p for p in pieces[2:])

    def block(self, items: list, indent: str, bound: set[str], seen: set[str]) -> bool:
        """Writes `items`; True when the block always returns (an unconditional entry)."""
        for item in items:
            if isinstance(item, int):
                self.lines.append(f"{indent}return {item}")
                return True
            inner = set(bound)
            texts, after = [], None
            for c in item.conds:
                texts.append(self.cond(c, inner, seen))
                if after is None:
                    after = set(inner)  # the first condition always runs; the others may not
            if len(texts) == 1:
                self.lines.append(f"{indent}if {texts[0]}:")
            else:
                self.lines.append(f"{indent}if ({texts[0]}")
                self.lines.extend(f"{indent}        and {t}" for t in texts[1:])
                self.lines[-1] += "):"
            self.block(item.body, indent + _INDENT, inner, seen)
            bound = after
        return False


def _var_names(entries: list[tuple[int, list[Guard]]]) -> dict[Source, str]:
    """A local for every guarded source and each of its prefixes, named after the path."""
    names: dict[Source, str] = {}
    used: set[str] = set()
    for _, guards in entries:
        for g in guards:
            for s in reversed(g.src.chain()):
                if s in names:
                    continue
                name, n = s.stem, 1
                while name in used:
                    n += 1
                    name = f"{s.stem}_{n}"
                used.add(name)
                names[s] = name
    return names


def generate(entries: list[tuple[int, list[Guard]]], overlaps: Callable[[int, int], bool],
             miss: Callable[[dict], int], careful: Callable[[dict], int], name: str,
             title: str) -> Generated:
    """The guard function of `entries` ((id, guards in check order), most recent hit first)."""
    var_names = _var_names(entries)
    blocks = _blocks(_build_tree(entries, overlaps))
    ns = Namespace()
    writer = _Writer(var_names, ns)
    always = writer.block(blocks, _INDENT * 2, set(), set())
    fname = "guard_" + re.sub(r"\W", "_", name)
    head = [f"# guards of {title}: returns the id of the first entry, most recent hit first,",
            "# whose guards all pass; on a miss, _miss records why and returns -1",
            *(f"# {const} = {_short(obj)}" for const, obj in ns.shown),
            f"def {fname}(f_locals, f_globals, f_builtins):",
            *(f"{_INDENT}{v} = _U" for v in sorted(writer.maybe)),
            f"{_INDENT}try:"]
    tail = [] if always else [f"{_INDENT * 2}return _miss(locals())"]
    tail += [f"{_INDENT}except Exception:", f"{_INDENT * 2}return _careful(locals())"]
    text = "\n".join(head + writer.lines + tail) + "\n"
    ns.ns.update(_U=UNBOUND, _miss=miss, _careful=careful)
    exec(compile(text, f"<{fname}>", "exec"), ns.ns)  # noqa: S102 - our own generated code
    var_sources = {v: s for s, v in var_names.items()}
    return Generated(ns.ns[fname], text, var_sources)


def _short(obj: Any) -> str:
    if isinstance(obj, weakref.ref):  # an identity guard's object, held weakly (checks.Held)
        target = obj()
        return "a weak reference to " + ("a dead object" if target is None else _short(target))
    text = repr(obj)
    return text if len(text) <= 100 and "\n" not in text else describe(obj)


class _Unbound:
    """The value of a local that no branch has bound yet."""

    def __repr__(self) -> str:
        return "_U"


UNBOUND = _Unbound()
