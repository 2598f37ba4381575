"""`with` blocks during simulation: grad-mode contexts captured into the SIR, user context managers inlined.

On CPython 3.11-3.13, `with cm as v:` is BEFORE_WITH (call `cm.__enter__()`, push the bound
`__exit__` below its result), the body, and on the normal way out an ordinary CALL of that
`__exit__` with (None, None, None). The exceptional way out (PUSH_EXC_INFO, WITH_EXCEPT_START,
RERAISE) runs when the body raises an exception the simulation models (see `exceptions`): the same
`__exit__` is called with the exception's class, the exception and a traceback placeholder.

- `paddle.no_grad()`, `paddle.enable_grad()`, `paddle.set_grad_enabled(flag)` made in the frame,
  and no_grad / enable_grad objects read from outside it: entering one sets the builder's
  `grad_mode`, so the statements recorded inside carry it (`Statement.grad`) and lowering keeps
  their outputs out of backward, as eager's ops under no_grad record nothing; the exit restores
  the mode the context saved when it was entered (made, for set_grad_enabled), as the runtime's
  does. The real grad mode never changes while translating.
- an object whose type defines `__enter__` and `__exit__` in Python: both are inlined (what they
  write into objects from outside is a side effect, replayed after the graph as any other).
- `paddle.amp.auto_cast()`: its entry changes the runtime's amp state and warns on every call, so the
  block runs eagerly (SOT-S001); the call making it is a runtime state call, a break already.
- a `@contextlib.contextmanager` function called in the frame (or the fresh manager a function it
  decorates makes per call) and `contextlib.suppress(...)` (whose exit's `issubclass` on a tuple is
  not simulated): no real manager is made (a LibraryContextVariable). (`nullcontext()` is an object of
  a plain Python class, made in the translation as any: see `objects`.) The generator of a
  contextmanager is inlined and stopped at its start; entering runs it to its first `yield` (what `as`
  binds), the normal exit resumes it and expects it to return, the exceptional exit raises the
  exception at that `yield` as contextlib's `gen.throw` does: the same exception leaving it is not
  suppressed, returning suppresses it, another raised replaces it. Such a generator may yield inside
  `try` and `with` (its frame is `managed`): its exit always resumes it, so no handler is left for a
  close to run. What contextlib would raise (no yield, a second yield, a second entry) runs the frame
  eagerly, which raises it. A break inside the block cannot hand the suspended generator on (the bound
  `__exit__` on the stack cannot be rebuilt): the translator simulates the frame again with
  `real_managers`, where the call making such a manager breaks (contextlib's code runs as it is), and
  so do entering a real `@contextmanager` manager (BEFORE_WITH run for real, the block resumed with
  its bound `__exit__`) and leaving it (`ContextlibForReal`).
- anything else (a context manager written in C): the frame cannot be captured (`Unsupported`,
  SOT-B003).

A graph break inside a `with` body resumes inside it (see sot.codegen.break_code): the break
code enters a grad-mode context of the block's mode for real around the breaking instruction, and
the resume function enters one again in its prologue, so its translation simulates the block from
its start with the caller's mode outside it; a user context manager is passed on as its bound `__exit__`.

The grad mode of the compiled call's caller is read, and guarded, only where the translation
depends on it (`outer_grad_mode`): `paddle.is_grad_enabled()` outside any grad-mode block,
`.stop_gradient` of a tensor the frame computed, and `enable_grad()` (a compiled subgraph records
autograd only when its caller's mode is on, so under an outer no_grad such a frame runs eagerly).
Statements recorded outside grad-mode blocks inherit the caller's mode at run time, so one
translation serves calls with grad on and off.
"""
from __future__ import annotations

import contextlib
import inspect
import types
from typing import Any, Callable, Iterable

from runtime.autograd import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from sot.guards.source import expression
from sot.pyversion import Instruction

from .dispatch import FrameRaises, Unsupported, handles
from .trackers import ExpressionTracker, GetAttrTracker
from .variables import BoundMethodVariable, ConstantVariable, ExceptionVariable, FunctionVariable, \
    GeneratorContextVariable, GeneratorVariable, InstanceVariable, LibraryContextExitVariable, \
    LibraryContextVariable, ListVariable, ObjectVariable, SuppressVariable, TensorVariable, \
    TupleVariable, Variable
from .wording import shown

__all__ = ["ContextMixin", "GradModeVariable", "GradModeExitVariable", "ContextlibForReal", "holds_simulated_context"]

# modules of runtime whose context managers change the runtime's global state when entered: never inlined
_STATE_CONTEXT_MODULES = frozenset({"runtime.amp.auto_cast"})
# the caller's grad mode, as a guard reads it
_GRAD_MODE_SOURCE = expression("__import__('runtime').is_grad_enabled()")
# the code of every function `@contextlib.contextmanager` returns (`helper`, whose free variable is the decorated one)
_CONTEXTMANAGER_HELPER_CODE = contextlib.contextmanager(lambda: iter(())).__code__
# what a function decorated with a `@contextmanager` manager calls to make a fresh manager per call
_RECREATE_CM = contextlib._GeneratorContextManager._recreate_cm
_GENERATOR_CONTEXT_EXIT = contextlib._GeneratorContextManager.__exit__


class ContextlibForReal(Unsupported):
    """A contextlib manager made, or a `@contextmanager` one left, for real at a break (see
    `real_managers`): contextlib's own code runs as eager code runs it, not translated as a frame of
    its own (it is not the user's code, and its generator is not the translation's to run)."""

    default_code = "SOT-B003"


class GradModeVariable(Variable):
    """A grad-mode context: `mode` while entered. `saved` is the mode its exit restores, taken when it
    is entered (when it is made, for set_grad_enabled, whose constructor switches the mode itself);
    one object entered twice keeps only the last, as the runtime's context objects do."""

    def __init__(self, mode: bool, switches_when_made: bool = False):
        super().__init__()
        self.mode = mode
        self.switches_when_made = switches_when_made
        self.saved: bool | None = None

    def _describe(self) -> str:
        return f"grad {'on' if self.mode else 'off'}"


class GradModeExitVariable(Variable):
    """The bound `__exit__` of an entered GradModeVariable, which BEFORE_WITH pushes; `before` is the
    mode in effect before that `with` statement."""

    def __init__(self, context: GradModeVariable, before: bool | None):
        super().__init__()
        self.context = context
        self.before = before

    def _describe(self) -> str:
        return self.context._describe()


class ContextMixin:
    """BEFORE_WITH, the grad-mode API and what depends on the caller's grad mode (part of OpcodeExecutor)."""

    # ------------------------------------------------------------ the caller's grad mode
    def outer_grad_mode(self) -> bool:
        """The grad mode of the compiled call's caller, now guarded: the translation depends on it."""
        return self.wrap(is_grad_enabled(), ExpressionTracker(_GRAD_MODE_SOURCE)).value

    def grad_mode_here(self) -> bool:
        """Whether grad is on at the current instruction of the simulated code."""
        mode = self.builder.grad_mode
        return self.outer_grad_mode() if mode is None else mode

    def stop_gradient_of(self, tensor: TensorVariable) -> bool:
        """`tensor.stop_gradient`: an input's or bound tensor's is guarded with it; a computed tensor's
        follows the caller's grad mode where its ops inherit it, so that mode is guarded."""
        if tensor.tracker.source is None and not tensor.bound:
            self.outer_grad_mode()
        return tensor.meta.stop_gradient

    def _switch_grad_mode(self, mode: bool) -> None:
        """Record what follows under `mode` (statements carry it: see Statement.grad)."""
        if mode and not self.outer_grad_mode():
            self.unsupported("enters enable_grad under the caller's no_grad: a compiled graph records autograd only "
                             "when its caller's grad mode is on", "SOT-G001")
        self.builder.grad_mode = mode

    # ------------------------------------------------------------ calls of the grad-mode API
    def context_call(self, fn: Variable, args: list[Variable], kwargs: dict[str, Variable]) -> Variable | None:
        """A call that makes or leaves a context manager the simulation models (the grad-mode API,
        contextlib's managers, their `__exit__`), simulated; None for any other callable."""
        made = self._library_context_call(fn, args, kwargs)
        return made if made is not None else self._grad_mode_call(fn, args, kwargs)

    def _grad_mode_call(self, fn: Variable, args: list[Variable], kwargs: dict[str, Variable]) -> Variable | None:
        """`no_grad()`, `enable_grad()`, `set_grad_enabled(flag)`, `is_grad_enabled()` and a grad-mode
        context's `__exit__`, simulated; None for any other callable."""
        if isinstance(fn, GradModeExitVariable):
            self._leaving(args, kwargs)
            if fn.context.saved != fn.before:  # an object entered twice: eager leaves the mode changed
                self.unsupported("enters a grad-mode context again inside its own with block, which leaves the grad "
                                 "mode changed after it (a side effect)", "SOT-S001")
            self.builder.grad_mode = fn.context.saved
            return ConstantVariable(None)
        simulate = _grad_mode_api(fn.value) if isinstance(fn, ObjectVariable) else None
        return None if simulate is None else simulate(self, args, kwargs)

    def _leaving(self, args: list[Variable], kwargs: dict[str, Variable]) -> ExceptionVariable | None:
        """The exception a simulated `__exit__` is called with on leaving its with block (None: left
        normally); any other call of it cannot be simulated."""
        leaving = [a.value if isinstance(a, ConstantVariable) else a for a in args]
        if not kwargs and leaving == [None] * 3:
            return None
        if kwargs or not (len(args) == 3 and isinstance(args[1], ExceptionVariable)):
            self.unsupported("calls a context manager's __exit__ other than on leaving its with block")
        return args[1]

    def _make_grad_context(self, mode: bool, args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
        if args or kwargs:
            self.unsupported(f"uses {'enable_grad' if mode else 'no_grad'} as a decorator inside the function")
        return GradModeVariable(mode)

    def _set_grad_enabled(self, args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
        """`set_grad_enabled(flag)` switches the mode when made; only the `with` form is simulated (the
        bare call changes the mode for the rest of the frame and for its caller: a break runs it)."""
        given = [*args, *kwargs.values()]
        if len(given) != 1:
            self.unsupported(f"calls set_grad_enabled with {len(given)} arguments")
        flag = given[0]
        following = self.normalised.instructions[self.normalised.index(self.current) + 1]
        if following.opname != "BEFORE_WITH":
            self.unsupported("calls set_grad_enabled outside a with statement, which changes the caller's grad mode",
                             "SOT-S001")
        context = GradModeVariable(self.truth(flag), switches_when_made=True)  # a tensor flag: a break
        context.saved = self.builder.grad_mode
        self._switch_grad_mode(context.mode)
        return context

    def _is_grad_enabled(self, args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
        if args or kwargs:
            self.unsupported("calls is_grad_enabled with arguments")
        return ConstantVariable(self.grad_mode_here())

    # ------------------------------------------------------------ with
    @handles("BEFORE_WITH")
    def _before_with(self, ins: Instruction) -> None:
        manager = self.stack.pop()
        if isinstance(manager, InstanceVariable) and type(manager.value) in (no_grad, enable_grad):
            manager = self._outside_grad_context(manager)
        if isinstance(manager, GradModeVariable):
            before = manager.saved if manager.switches_when_made else self.builder.grad_mode
            if not manager.switches_when_made:
                self._switch_grad_mode(manager.mode)
                manager.saved = before
            exit_, entered = GradModeExitVariable(manager, before), ConstantVariable(None)
        elif isinstance(manager, LibraryContextVariable):
            exit_, entered = LibraryContextExitVariable(manager), self._enter_library_context(manager)
        elif isinstance(manager, InstanceVariable) and type(manager.value) is contextlib._GeneratorContextManager:
            raise ContextlibForReal(ins.opname, self.where(), "enters a @contextmanager manager that exists for real "
                                    "(made at a break, or outside the function): it is entered for real")
        elif isinstance(manager, InstanceVariable) and type(manager.value).__module__ in _STATE_CONTEXT_MODULES:
            self.unsupported("enters paddle.amp.auto_cast, whose entry checks its arguments, warns and sets the "
                             "runtime's amp state on every call: the block runs eagerly", "SOT-S001")
        elif isinstance(manager, InstanceVariable):
            enter = self._python_method(manager, "__enter__")
            exit_ = self._python_method(manager, "__exit__")
            entered = self.call(enter, [], {})
        else:
            self.unsupported(f"enters a with statement over {shown(manager)}, which sot cannot trace", "SOT-B003")
        self.stack.extend([exit_, entered])

    def _outside_grad_context(self, manager: InstanceVariable) -> GradModeVariable:
        """A no_grad / enable_grad object read from outside the frame (its type is guarded): one
        GradModeVariable per object, so entering it twice shares the saved mode as the object does."""
        contexts = self.translation.contexts
        context = contexts.get(id(manager.value))
        if context is None:
            context = contexts[id(manager.value)] = GradModeVariable(type(manager.value)._mode)
        return context

    def _python_method(self, manager: InstanceVariable, name: str) -> Variable:
        """`manager.<name>` as a method whose code can be inlined."""
        method = self.load_attr(manager, name)
        if not (isinstance(method, BoundMethodVariable) and isinstance(method.function, FunctionVariable)):
            self.unsupported(f"enters or leaves a {type(manager.value).__name__}, whose {name} is not Python code "
                             "sot can trace",
                             "SOT-B003")
        return method

    # ------------------------------------------------------------ contextlib's managers
    def _library_context_call(self, fn: Variable, args: list[Variable],
                              kwargs: dict[str, Variable]) -> Variable | None:
        """A call of a `@contextlib.contextmanager` function (also the fresh manager a function decorated
        with one makes per call), `contextlib.suppress(...)`, or the
        `__exit__` of one entered: simulated (no real manager is made); None for any other callable.
        A translation asked to make them for real (`real_managers`: a break inside such a block could
        not hand the simulated one on) breaks at the call, and at the exit of one entered for real."""
        if isinstance(fn, LibraryContextExitVariable):
            return self._leave_library_context(fn.context, self._leaving(args, kwargs))
        if isinstance(fn, FunctionVariable) and fn.value is _GENERATOR_CONTEXT_EXIT:
            raise ContextlibForReal(self.current.opname, self.where(), "leaves a with block over a @contextmanager "
                                    "manager entered for real: its exit runs for real")
        make = self._library_context_maker(fn, args, kwargs)
        if make is not None and self.translation.real_managers:
            raise ContextlibForReal(self.current.opname, self.where(), f"makes the context manager {shown(fn)}(...) "
                                    "for real, as a graph break inside its with block (or its own code) needs")
        return None if make is None else make()

    def _library_context_maker(self, fn: Variable, args: list[Variable],
                               kwargs: dict[str, Variable]) -> Callable[[], Variable] | None:
        """How the call `fn(*args, **kwargs)` makes a simulated contextlib manager (None: it does not)."""
        if isinstance(fn, FunctionVariable) and fn.value is not None:
            if fn.value.__code__ is _CONTEXTMANAGER_HELPER_CODE:
                decorated = fn.value.__closure__[0].cell_contents  # (the helper's only free variable, `func`)
                if getattr(fn.value, "__wrapped__", None) is not decorated or \
                        not inspect.isgeneratorfunction(decorated):
                    return None
                return lambda: self._generator_context(
                    self.wrap(decorated, GetAttrTracker(fn.tracker, "__wrapped__")), args, kwargs)
            if fn.value is _RECREATE_CM and len(args) == 1 and not kwargs and _recreatable(args[0]):
                return lambda: self._recreated_generator_context(args[0])
            return None
        if isinstance(fn, ObjectVariable) and fn.value is contextlib.suppress:
            return lambda: self._suppress(args, kwargs)
        return None

    def _suppress(self, args: list[Variable], kwargs: dict[str, Variable]) -> SuppressVariable:
        kinds = None if kwargs else _classes(TupleVariable(args))
        if kinds is None:
            self.unsupported("calls contextlib.suppress with other arguments than exception classes (or tuples "
                             "of them): it is made for real", "SOT-B003")
        return SuppressVariable(kinds)

    def _generator_context(self, function: FunctionVariable, args: list[Variable],
                           kwargs: dict[str, Variable]) -> GeneratorContextVariable:
        """The manager `function(*args, **kwargs)` makes under `@contextmanager`: its generator inlined,
        stopped at its start until a with statement enters it."""
        generator = self.inline(function, args, kwargs)
        assert isinstance(generator, GeneratorVariable)  # (a generator function's call always gives one)
        generator.frame.managed = True
        return GeneratorContextVariable(shown(function), generator)

    def _recreated_generator_context(self, manager: InstanceVariable) -> GeneratorContextVariable:
        """What a function decorated with a `@contextmanager` manager does per call: a fresh manager of
        the same function and arguments (contextlib's `_recreate_cm`)."""
        function = self.load_attr(manager, "func")
        args, kwargs = self.load_attr(manager, "args"), self.load_attr(manager, "kwds")
        return self._generator_context(function, list(args.items), dict(kwargs.items))

    def _enter_library_context(self, manager: LibraryContextVariable) -> Variable:
        """What entering `manager` gives (`as` binds it): a generator's first yielded value."""
        if isinstance(manager, SuppressVariable):
            return ConstantVariable(None)
        if manager.entered:
            self.raises(f"enters the manager {manager.name}(...) made a second time: contextlib raises AttributeError")
        manager.entered = True
        try:
            item = self._resume(manager.generator)
        except Unsupported as e:
            if isinstance(e, FrameRaises) or not e.breakable:
                raise
            # what its code cannot be simulated doing runs for real: the manager is then made for real
            raise ContextlibForReal(e.opname, e.where, f"{manager.name}(...) {e.detail}: the manager is entered "
                                    "for real", e.code) from e
        if item is None:
            self.raises(f"{manager.name}(...) returns without yielding: contextlib raises RuntimeError")
        return item

    def _leave_library_context(self, manager: LibraryContextVariable, exc: ExceptionVariable | None) -> Variable:
        """`__exit__` of `manager` leaving its block normally (`exc` None) or by `exc`: whether it suppresses
        it. A generator goes on from its yield, `exc` raised there as contextlib's `gen.throw` raises it: it
        must then finish; the exception it lets through (the same one) is not suppressed, another it
        raises replaces it."""
        if exc is None and isinstance(manager, SuppressVariable):
            return ConstantVariable(None)
        if isinstance(manager, SuppressVariable):
            return ConstantVariable(issubclass(exc.kind, manager.kinds))
        try:
            item = self._resume(manager.generator, exc)
        except FrameRaises as raised:
            if exc is not None and raised.raised is exc:
                return ConstantVariable(False)
            raise
        if item is not None:
            self.raises(f"{manager.name}(...) yields again after its with block: contextlib raises RuntimeError")
        return ConstantVariable(exc is not None)

    def _resume(self, generator: GeneratorVariable, thrown: ExceptionVariable | None = None) -> Variable | None:
        """Run a with statement's generator on to its next yield (None: it returned), with `thrown`
        raised at the yield it stopped at; an exception leaving it finishes it."""
        frame = generator.frame
        try:
            if thrown is not None:
                frame.current = frame.normalised.instructions[frame.resume_pc - 1]  # its YIELD_VALUE
                frame.catch(FrameRaises(frame.current.opname, frame.where(), f"raises {shown(thrown)}",
                                        raised=thrown))
                frame.resume_pc = frame.normalised.index(frame.jump_to)
            return generator.next(self)
        except FrameRaises as raised:
            generator.done = True
            if isinstance(raised.raised, ExceptionVariable) and issubclass(raised.raised.kind, StopIteration):
                self.raises("a StopIteration leaves a generator: Python turns it into RuntimeError")
            raise


_GRAD_MODE_API: dict[Any, Callable[[ContextMixin, list[Variable], dict[str, Variable]], Variable]] = {
    no_grad: lambda ex, args, kwargs: ex._make_grad_context(False, args, kwargs),
    enable_grad: lambda ex, args, kwargs: ex._make_grad_context(True, args, kwargs),
    set_grad_enabled: ContextMixin._set_grad_enabled,
    is_grad_enabled: ContextMixin._is_grad_enabled,
}


def holds_simulated_context(values: Iterable[Variable]) -> bool:
    """Whether a contextlib manager the translation simulates (or one's bound `__exit__`) is among
    `values`: no break can hand it on (its generator's state lives in the simulation only)."""
    return any(isinstance(v, (LibraryContextVariable, LibraryContextExitVariable)) for v in values)


def _classes(var: Variable) -> tuple | None:
    """The classes a tuple of classes, nested or not, stands for, as `issubclass` takes them (None: it
    holds something else)."""
    if isinstance(var, ObjectVariable) and isinstance(var.value, type):
        return var.value
    if not isinstance(var, TupleVariable) or isinstance(var, ListVariable):
        return None
    items = tuple(_classes(item) for item in var.items)
    return None if None in items else items


def _recreatable(var: Variable) -> bool:
    """Whether `var` is a `@contextmanager` manager whose generator function and arguments (guarded as
    they are read) make a fresh one as contextlib does."""
    if not (isinstance(var, InstanceVariable) and type(var.value) is contextlib._GeneratorContextManager):
        return False
    manager = var.value
    return (inspect.isgeneratorfunction(getattr(manager, "func", None)) and type(manager.func) is types.FunctionType
            and type(getattr(manager, "args", None)) is tuple and type(getattr(manager, "kwds", None)) is dict)


def _grad_mode_api(value: Any) -> Callable | None:
    """How a call of `value` is simulated, if it is one of the grad-mode API."""
    try:
        return _GRAD_MODE_API.get(value)
    except TypeError:  # an unhashable callable
        return None
