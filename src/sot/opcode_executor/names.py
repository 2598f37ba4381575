"""Names: locals, closure cells, globals, builtins and imports, read and written during simulation.

A local of the translated frame is its argument, wrapped (and so guarded) on first use. A closure
cell of a real function is one Variable per cell for the whole translation, so the frame and the
closures it calls see each other's writes, as in CPython; a write into a real cell, or into a global,
is a side effect replayed after the graph. A builtin read is guarded to stay unshadowed by a global
of the same name; an import is simulated only for a module already imported (importing runs code),
or, as the ModuleNotFoundError it raises, for a top-level module no finder finds (guarded on that).
"""
from __future__ import annotations

import importlib.util
import sys
from typing import Any

from sot.guards.source import F_GLOBALS, expression
from sot.pyversion import Instruction

from .dispatch import FrameRaises, handles
from .trackers import (BuiltinTracker, CellTracker, ClosureTracker, ExpressionTracker, GetAttrTracker, GetItemTracker,
                       GlobalTracker, LocalTracker, Tracker)
from .variables import NULL, CellVariable, FunctionVariable, ObjectVariable, Variable
from .wording import shown

__all__ = ["NamesMixin"]

def _item_trackers(tracker: Tracker, attribute: str, count: int) -> list[Tracker]:
    """Trackers of `tracked.attribute[i]` for i < count (a function's defaults or closure)."""
    base = GetAttrTracker(tracker, attribute)
    return [GetItemTracker(base, i) for i in range(count)]


class NamesMixin:
    """LOAD/STORE/DELETE of fast locals, cells, globals; MAKE_FUNCTION, imports (part of OpcodeExecutor)."""

    def local(self, name: str) -> Variable:
        """The Variable of a local; an argument of the translated frame is read on first use."""
        var = self.locals.get(name)
        if var is None:
            if name not in self.f_locals or name in self.code.co_freevars:
                self.unsupported(f"reads the local {name!r}, which has no value yet")
            var = self.locals[name] = self.wrap(self.f_locals[name], LocalTracker(name))
        if var is NULL:
            raise FrameRaises("LOAD_FAST", self.where(),
                              f"raises UnboundLocalError: local {name!r} referenced before assignment")
        return var

    @handles("LOAD_FAST")
    def _load_fast(self, ins: Instruction) -> None:
        self.stack.append(self.local(ins.argval))

    @handles("STORE_FAST")
    def _store_fast(self, ins: Instruction) -> None:
        self.locals[ins.argval] = self.stack.pop()  # NULL: LOAD_FAST_AND_CLEAR found it unbound

    @handles("DELETE_FAST")
    def _delete_fast(self, ins: Instruction) -> None:
        self.local(ins.argval)
        self.locals[ins.argval] = NULL  # unbound from now on, even an argument

    @handles("LOAD_FAST_AND_CLEAR")
    def _load_fast_and_clear(self, ins: Instruction) -> None:
        name = ins.argval
        bound = self.locals.get(name) is not NULL and (name in self.locals or name in self.f_locals)
        self.stack.append(self.local(name) if bound else NULL)
        self.locals[name] = NULL

    # ------------------------------------------------------------ cells and closures
    @handles("MAKE_CELL")
    def _make_cell(self, ins: Instruction) -> None:
        name = ins.argval
        bound = self.locals.get(name) is not NULL and (name in self.locals or name in self.f_locals)
        self.cells[name] = CellVariable(self.local(name) if bound else None)
        self.locals[name] = NULL

    def free_cells(self) -> list[CellVariable]:
        """The cells of the frame's free variables: the translated frame's show in f_locals. A write into
        one is made after the graph, into the frame's own cell (a resume function's cells are the cells
        of the frame it continues, which its other closures share)."""
        names = self.code.co_freevars
        if self.f_closure is not None and len(self.f_closure) != len(names):
            self.unsupported("uses a closure that does not match its code's free variables, which sot cannot translate")
        return [self._free_cell(name, cell) for name, cell in zip(names, self.f_closure or [None] * len(names))]

    def _free_cell(self, name: str, cell: Any) -> CellVariable:
        """The Variable of the translated frame's free variable `name`, whose cell is `cell` (None: unknown,
        with a C extension built before frames showed their closure: then writing it is not captured)."""
        def make() -> CellVariable:
            content = self.wrap(self.f_locals[name], CellTracker(name)) if name in self.f_locals else None
            where = None if cell is None else (ObjectVariable(cell, ClosureTracker(name)),)
            return CellVariable(content, real=True, where=where)
        if cell is None:
            self.translation.unknown_cells = True
            return make()
        return self.translation.cell(cell, make)

    @handles("COPY_FREE_VARS")
    def _copy_free_vars(self, ins: Instruction) -> None:
        self.cells.update(zip(self.code.co_freevars, self.free_cells()))

    @handles("LOAD_DEREF")
    def _load_deref(self, ins: Instruction) -> None:
        cell = self.cells.get(ins.argval)
        if cell is None or cell.content is None:
            self.unsupported(f"reads the free variable {ins.argval!r}, which has no value yet")
        self.stack.append(cell.content)

    @handles("STORE_DEREF")
    def _store_deref(self, ins: Instruction) -> None:
        cell = self.cells[ins.argval]
        if cell.real:  # a cell of a real function: the write is replayed into it after the graph
            holder = None if cell.where is None else cell.where[0] if len(cell.where) == 1 else self.wrap(*cell.where)
            if holder is None or not self.reloadable(holder) or self.translation.unknown_cells:
                self.unsupported(f"assigns {ins.argval!r}, a variable of an enclosing function sot cannot reach on "
                                 "the next call", "SOT-S001")
            self.record_write()
            self.translation.effects.set_attr(holder, "cell_contents", self.stack[-1])
        self.touch(cell)
        cell.content = self.stack.pop()

    @handles("DELETE_DEREF")
    def _delete_deref(self, ins: Instruction) -> None:
        cell = self.cells[ins.argval]
        if cell.content is None:
            raise FrameRaises(ins.opname, self.where(), f"raises NameError: free variable {ins.argval!r} referenced "
                                                         "before assignment")
        if cell.real:
            self.unsupported(f"deletes {ins.argval!r}, a variable of an enclosing function", "SOT-S001")
        self.touch(cell)
        cell.content = None

    @handles("LOAD_CLOSURE")
    def _load_closure(self, ins: Instruction) -> None:
        self.stack.append(self.cells[ins.argval])

    @handles("MAKE_FUNCTION")
    def _make_function(self, ins: Instruction) -> None:
        code = self.stack.pop()
        closure = self.stack.pop().items if ins.arg & 0x08 else ()
        if ins.arg & 0x04:
            self.stack.pop()  # annotations: not needed to run the function
        kwdefaults = self.stack.pop().items if ins.arg & 0x02 else {}
        defaults = tuple(self.elements(self.stack.pop())) if ins.arg & 0x01 else ()  # (a constant tuple: folded)
        self.stack.append(FunctionVariable(None, code=code.value, defaults=defaults, kwdefaults=kwdefaults,
                                           closure=tuple(closure), f_globals=self.f_globals,
                                           global_tracker=self.global_tracker))

    def _parts_of(self, fn: FunctionVariable) -> tuple[tuple, dict, tuple]:
        """A real function's defaults, keyword defaults and closure cells as Variables."""
        value, tracker = fn.value, fn.tracker
        defaults = tuple(self.wrap(v, t) for v, t in zip(value.__defaults__ or (), _item_trackers(
            tracker, "__defaults__", len(value.__defaults__ or ()))))
        kw_base = GetAttrTracker(tracker, "__kwdefaults__")
        kwdefaults = {k: self.wrap(v, GetItemTracker(kw_base, k)) for k, v in (value.__kwdefaults__ or {}).items()}
        cells = [self.translation.cell(cell, lambda cell=cell, t=t: self._cell_of(cell, t, tracker.source is not None))
                 for cell, t in zip(value.__closure__ or (), _item_trackers(tracker, "__closure__", len(
                     value.__closure__ or ())))]
        return defaults, kwdefaults, tuple(cells)

    def _cell_of(self, cell: Any, tracker: Tracker, reachable: bool) -> CellVariable:
        """The Variable of a closure cell of a function read from the frame, reached through `tracker`."""
        where = (cell, tracker) if reachable else None
        try:
            contents = cell.cell_contents
        except ValueError:  # an empty cell
            return CellVariable(None, real=True, where=where)
        return CellVariable(self.wrap(contents, GetAttrTracker(tracker, "cell_contents")), real=True, where=where)

    def zero_arg_super(self) -> tuple[Variable, Variable]:
        """`super()`'s two implicit arguments: the `__class__` cell and the first argument."""
        cell = self.cells.get("__class__")
        if cell is None or cell.content is None or not self.code.co_argcount:
            self.unsupported("calls super() without a __class__ cell or a first argument, which sot cannot translate")
        first = self.code.co_varnames[0]
        receiver = self.cells[first].content if first in self.cells else self.local(first)
        return cell.content, receiver

    # ------------------------------------------------------------ globals and imports
    def global_tracker(self, name: str) -> Tracker:
        """Where the global `name` of this frame's code comes from."""
        return GlobalTracker(name)

    @handles("LOAD_GLOBAL")
    def _load_global(self, ins: Instruction) -> None:
        name = ins.argval
        written = self.translation.effects.global_value(self.f_globals, name)
        if written is not None:
            var = written
        elif name in self.f_globals:
            tracker = self.global_tracker(name)
            if tracker is None:
                self.unsupported(f"reads the global {name!r} of a function sot cannot find again on the next call")
            var = self.wrap(self.f_globals[name], tracker)
        elif name in self.f_builtins:
            var = self.wrap(self.f_builtins[name], BuiltinTracker(name))
            self._guard_unshadowed(name)
        else:
            self.unsupported(f"reads the global {name!r}, which is not defined")
        if ins.push_null:
            self.push_call_slots(var)
        else:
            self.stack.append(var)

    def _guard_unshadowed(self, name: str) -> None:
        """A builtin was read because this frame's globals lack `name`: a global of that name defined
        later would shadow it, so its absence is guarded too."""
        where = self.global_tracker(name)
        if isinstance(where, GetItemTracker):  # a callee's `fn.__globals__[name]`
            globals_source = where.base.source
        elif type(where) is GlobalTracker:
            globals_source = F_GLOBALS
        else:  # a runtime function's globals (fixed) or none reloadable
            return
        if globals_source is not None:
            self.guard_lacks(globals_source, name)

    @handles("STORE_GLOBAL")
    def _store_global(self, ins: Instruction) -> None:
        if self.f_globals is not self.translation.f_globals:
            self.unsupported(f"assigns the global {ins.argval!r} of another module", "SOT-S001")
        self.record_write()
        self.translation.effects.set_global(self.f_globals, ins.argval, self.stack.pop())

    @handles("DELETE_ATTR", "DELETE_GLOBAL")
    def _side_effect(self, ins: Instruction) -> None:
        what = "global" if ins.opname == "DELETE_GLOBAL" else "attribute"
        self.unsupported(f"deletes the {what} {ins.argval!r}, a change visible outside the function", "SOT-S001")

    @handles("IMPORT_NAME")
    def _import_name(self, ins: Instruction) -> None:
        level, fromlist = (self.python_value(v) for v in self.pop(2))
        name = ins.argval
        if level == 0 and name not in sys.modules and self._module_missing(name):
            raise FrameRaises.of(ins.opname, self.where(), ModuleNotFoundError(f"No module named {name!r}"))
        if level != 0 or name not in sys.modules:
            self.unsupported(f"imports {name!r}, which is not imported yet (importing it runs its code)", "SOT-B003")
        module = sys.modules[name] if fromlist else sys.modules[name.partition(".")[0]]
        source = f"__import__({name!r}, fromlist={fromlist!r})" if fromlist else f"__import__({name!r})"
        self.stack.append(self.wrap(module, ExpressionTracker(expression(source))))

    def _module_missing(self, name: str) -> bool:
        """Whether importing the top-level module `name` raises ModuleNotFoundError: no finder finds it (asking
        them imports nothing), guarded by asking again on each call, as eager code's import does."""
        if "." in name:  # finding a submodule imports its package
            return False
        missing = importlib.util.find_spec(name) is None
        found = f"__import__('importlib.util').util.find_spec({name!r}) is None"
        self.wrap(missing, ExpressionTracker(expression(found)))
        return missing

    @handles("IMPORT_FROM")
    def _import_from(self, ins: Instruction) -> None:
        self.stack.append(self.load_attr(self.stack[-1], ins.argval))
