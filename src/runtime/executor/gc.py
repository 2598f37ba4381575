"""Variable lifetimes (Paddle's last_live_ops_ and var_ref_count_).

For each tracked var, the ops that use it (its writers and the readers that need its buffer);
of those, the last users are the ones that happen before no other user. The var's reference
count is the number of last users, and each of them checks it after running (its
`gc_check_vars`); the var is freed when the count reaches zero, i.e. after the last of them. In
program order that is the greatest index, which is where the sequential mode frees it. A var
written and never read is freed right after its writer. Holder vars (feed/fetch lists) and
`skip_gc_vars` are not tracked; persistable, fed and fetched vars are tracked (they appear in
the plan, as in Paddle's GC table example) but never freed.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

__all__ = ["Lifetimes", "analyse_lifetimes"]


@dataclass(frozen=True)
class Lifetimes:
    last_live: dict[int, frozenset[int]]        # var id -> its last users
    ref_count: dict[int, int]
    gc_check_vars: tuple[tuple[int, ...], ...]  # per op: vars whose count it decrements
    free_after: tuple[tuple[int, ...], ...]     # per op: vars the sequential mode frees after it


def analyse_lifetimes(uses: Sequence[Iterable[int]], tracked: Callable[[int], bool],
                      freeable: Callable[[int], bool], reach: Sequence[int]) -> Lifetimes:
    """Last users, reference counts and free points of every tracked var used by the ops
    (`reach[a]` has bit b set when op a happens before op b)."""
    users: dict[int, list[int]] = {}
    for op, vs in enumerate(uses):
        for v in vs:
            if tracked(v):
                lst = users.setdefault(v, [])
                if not lst or lst[-1] != op:
                    lst.append(op)
    last_live: dict[int, frozenset[int]] = {}
    checks: list[list[int]] = [[] for _ in uses]
    frees: list[list[int]] = [[] for _ in uses]
    for v, ops in users.items():
        mask = 0
        for b in ops:
            mask |= 1 << b
        last = frozenset(a for a in ops if not reach[a] & mask)  # reach[a] bit b: a happens before b
        last_live[v] = last
        for a in last:
            checks[a].append(v)
        if freeable(v):
            frees[max(last)].append(v)
    return Lifetimes(last_live, {v: len(s) for v, s in last_live.items()},
                     tuple(tuple(c) for c in checks), tuple(tuple(f) for f in frees))
