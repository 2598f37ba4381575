"""`static.Executor`: checks feeds and fetches, prepares and caches one InterpreterCore per
(program hash, feed names, fetch names, scope), and runs it (Paddle's `StandaloneExecutor` façade).

On a cache miss the façade validates the names, prepares a copy of the program
(`prepare.prepare_program`: the front end's passes, feed and fetch ops; the user's Program is
never changed) and builds a core on it. On every run it checks the fed values against their vars
(shape with -1 matching any size, dtype) before anything runs, so a bad feed changes nothing.
Programs are read through `program.py`'s Protocols; the default program and the Variable type
come from the installed front end (`program.frontend()`).
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np

from .. import flags as _flags
from ..place import CPUPlace, is_device_array
from ..tensor import Tensor
from .asyncvalue import AsyncValue
from .interpreter import InterpreterCore
from .plan import Plan
from .prepare import prepare_program
from .program import Frontend, Program, frontend
from .scope import Scope, global_scope
from .streams import run_queue

__all__ = ["Executor", "prepare_program"]

CACHE_CAPACITY = 32


def _fetch_names(fetch_list: Any, fe: Frontend) -> tuple[str, ...]:
    if fetch_list is None:
        return ()
    if isinstance(fetch_list, (str, fe.variable_type)):
        fetch_list = [fetch_list]
    if not isinstance(fetch_list, (list, tuple)):
        raise TypeError(f"Executor.run: argument 'fetch_list' must be a list of Variables or names, "
                        f"got {type(fetch_list).__name__}")
    return tuple(fe.var_names(fetch_list, "Executor.run", "fetch_list"))


class _FeedChecker:
    """Converts and checks the fed values of one core, in its feed order."""

    def __init__(self, program: Program, feed_names: tuple[str, ...]):
        block = program.global_block()
        self.specs = [(n, tuple(block.var(n)._shape), block.var(n)._np_dtype, block.var(n).need_check_feed)
                      for n in feed_names]

    def __call__(self, feed: dict) -> list:
        out = []
        for name, shape, dtype, check in self.specs:
            value = feed[name]
            if isinstance(value, Tensor):
                value = value._data
            if not isinstance(value, np.ndarray) and not is_device_array(value):
                value = np.asarray(value, dtype=dtype)
            elif value.dtype != dtype:
                if check:
                    raise ValueError(f"Executor.run: the fed value of variable '{name}' has dtype {value.dtype.name} "
                                     f"but the variable's dtype is {dtype.name}")
                value = value.astype(dtype)
            if check and (value.ndim != len(shape)
                          or any(d != -1 and d != s for d, s in zip(shape, value.shape))):
                raise ValueError(f"Executor.run: the fed value of variable '{name}' has shape {list(value.shape)} "
                                 f"but the variable's shape is {list(shape)} (-1 matches any size)")
            out.append(value)
        return out


def _run_into(arg: tuple[InterpreterCore, list, bool, AsyncValue]) -> None:
    """A queued run: its fetches, or its error, into the future."""
    core, feeds, return_numpy, future = arg
    try:
        out = core.run(feeds)
    except BaseException as e:  # noqa: BLE001 - the error belongs to whoever waits on the future
        future.set_error(e)
        return
    future.set_value(_results(out, return_numpy))


def _results(out: list, return_numpy: bool) -> list:
    """A run's fetches as `Executor.run` returns them: host arrays (`return_numpy`), else tensors on the
    place that computed them (a device core fetches device arrays)."""
    if return_numpy:
        return [a if isinstance(a, (np.ndarray, np.generic)) else a.get() for a in out]
    return [Tensor._wrap(a) for a in out]


class Executor:
    """Runs static programs on `place` (Paddle's `static.Executor`), one cached core per key."""

    def __init__(self, place: Any = None):
        self.place = CPUPlace() if place is None else place
        self._frontend = frontend()   # bound once: every run reads it
        self.cache_capacity = CACHE_CAPACITY
        self.stats = {"builds": 0, "hits": 0, "evictions": 0}
        self._cores: OrderedDict[tuple, tuple[InterpreterCore, _FeedChecker]] = OrderedDict()

    def run(self, program: Program | None = None, feed: dict | None = None, fetch_list: Any = None,
            feed_var_name: str = "feed", fetch_var_name: str = "fetch", scope: Scope | None = None,
            return_numpy: bool = True, use_program_cache: bool = True, use_prune: bool = False,
            return_futures: bool = False) -> list | AsyncValue:
        """Run `program` on `feed` in `scope`; the values of `fetch_list`, in its order.

        With `return_futures=True` the run is queued (feeds checked first, in this thread) and an
        AsyncValue of that list comes back at once (`result()`, `done()`, `add_done_callback`), so
        the caller can overlap its own work (the next batch's loading) with the run; queued runs
        execute one after another in the order they were queued."""
        feed = {} if feed is None else feed
        if not isinstance(feed, dict):
            raise TypeError(f"Executor.run: argument 'feed' must be a dict of name to value, got "
                            f"{type(feed).__name__}")
        core, check = self._core(program, feed, fetch_list, scope, feed_var_name, fetch_var_name)
        feeds = check(feed)
        if return_futures:
            future = AsyncValue()
            core.prepare()
            run_queue().submit(_run_into, (core, feeds, return_numpy, future))
            return future
        return _results(core.run(feeds), return_numpy)

    def plan_for(self, program: Program | None = None, feed: Any = None, fetch_list: Any = None,
                 scope: Scope | None = None, feed_var_name: str = "feed", fetch_var_name: str = "fetch") -> Plan:
        """The plan `run(program, feed, fetch_list, scope=scope)` uses (built now if needed, not run)."""
        feed = {n: None for n in feed} if isinstance(feed, (list, tuple)) else (feed or {})
        core, _ = self._core(program, feed, fetch_list, scope, feed_var_name, fetch_var_name)
        return core.plan

    def core_for(self, program: Program | None = None, feed: Any = None, fetch_list: Any = None,
                 scope: Scope | None = None) -> InterpreterCore:
        """The cached InterpreterCore for this key (built if needed): its stats, plan and local scope."""
        feed = {n: None for n in feed} if isinstance(feed, (list, tuple)) else (feed or {})
        return self._core(program, feed, fetch_list, scope, "feed", "fetch")[0]

    def close(self) -> None:
        """Drop every cached core."""
        for core, _ in self._cores.values():
            core.close()
        self._cores.clear()

    def _core(self, program: Program | None, feed: dict, fetch_list: Any, scope: Scope | None,
              feed_var_name: str, fetch_var_name: str) -> tuple[InterpreterCore, _FeedChecker]:
        fe = self._frontend
        program = fe.default_program() if program is None else program
        if not isinstance(program, fe.program_type):
            raise TypeError(f"Executor.run: argument 'program' must be a Program, got {type(program).__name__}")
        scope = global_scope() if scope is None else scope
        try:
            feed_names = tuple(sorted(feed))
        except TypeError:
            raise TypeError(f"Executor.run: the keys of 'feed' must be variable names (str), got "
                            f"{sorted(map(repr, feed))}") from None
        fetch_names = _fetch_names(fetch_list, fe)
        key = (program.structural_hash(), feed_names, fetch_names, scope.uid, feed_var_name, fetch_var_name,
               tuple(_flags._values.values()))
        entry = self._cores.get(key)
        if entry is not None:
            self._cores.move_to_end(key)
            self.stats["hits"] += 1
            return entry
        block = program.global_block()
        for name in feed_names:
            if not isinstance(name, str) or name not in block.vars:
                raise ValueError(f"Executor.run: feed key {name!r} is not a variable of the program")
        for name in fetch_names:
            if not block.has_var(name):
                raise ValueError(f"Executor.run: fetch target {name!r} is not a variable of the program")
        prepared, pairs = prepare_program(program, feed_names, fetch_names, feed_var_name, fetch_var_name)
        core = InterpreterCore(prepared, scope, self.place, feed_names, fetch_names,
                               holder_vars=(feed_var_name, fetch_var_name), inplace_pairs=pairs)
        core.build()
        entry = self._cores[key] = (core, _FeedChecker(program, feed_names))
        self.stats["builds"] += 1
        while len(self._cores) > self.cache_capacity:
            _, (old, _) = self._cores.popitem(last=False)
            old.close()
            self.stats["evictions"] += 1
        return entry
