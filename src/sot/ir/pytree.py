"""Nested tuples, lists and dicts of leaves (the shape of a call's arguments and results)."""
from __future__ import annotations

from typing import Any, Callable

__all__ = ["tree_map", "tree_leaves"]


def tree_map(fn: Callable[[Any], Any], tree: Any) -> Any:
    """The same nesting with `fn` applied to every leaf (named tuples keep their type)."""
    kind = type(tree)
    if kind is tuple or kind is list:
        return kind(tree_map(fn, x) for x in tree)
    if kind is dict:
        return {k: tree_map(fn, v) for k, v in tree.items()}
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):
        return kind(*(tree_map(fn, x) for x in tree))
    return fn(tree)


def tree_leaves(tree: Any) -> list[Any]:
    """The leaves in order (depth first, dict values in insertion order)."""
    out: list[Any] = []
    tree_map(out.append, tree)
    return out
