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
- anything else (a context manager written in C, one a generator makes with contextlib): the
  frame cannot be captured (`Unsupported`, SOT-B003).

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

from typing import Any, Callable

from runtime.autograd import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from sot.guards.source import expression
from sot.pyversion import Instruction

from .dispatch import handles
from .trackers import ExpressionTracker
from .variables import BoundMethodVariable, ConstantVariable, ExceptionVariable, FunctionVariable, InstanceVariable, \
    ObjectVariable, TensorVariable, Variable
from .wording import shown

__all__ = ["ContextMixin", "GradModeVariable", "GradModeExitVariable"]

# modules of runtime whose context managers change the runtime's global state when entered: never inlined
_STATE_CONTEXT_MODULES = frozenset({"runtime.amp.auto_cast"})
# the caller's grad mode, as a guard reads it
_GRAD_MODE_SOURCE = expression("__import__('runtime').is_grad_enabled()")


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
    def grad_mode_call(self, fn: Variable, args: list[Variable], kwargs: dict[str, Variable]) -> Variable | None:
        """`no_grad()`, `enable_grad()`, `set_grad_enabled(flag)`, `is_grad_enabled()` and a grad-mode
        context's `__exit__`, simulated; None for any other callable."""
        if isinstance(fn, GradModeExitVariable):
            leaving = [a.value if isinstance(a, ConstantVariable) else a for a in args]
            if kwargs or (leaving != [None] * 3 and not (len(args) == 3 and isinstance(args[1], ExceptionVariable))):
                self.unsupported("calls a grad-mode context's __exit__ other than on leaving its with block")
            if fn.context.saved != fn.before:  # an object entered twice: eager leaves the mode changed
                self.unsupported("enters a grad-mode context again inside its own with block, which leaves the grad "
                                 "mode changed after it (a side effect)", "SOT-S001")
            self.builder.grad_mode = fn.context.saved
            return ConstantVariable(None)
        simulate = _grad_mode_api(fn.value) if isinstance(fn, ObjectVariable) else None
        return None if simulate is None else simulate(self, args, kwargs)

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


_GRAD_MODE_API: dict[Any, Callable[[ContextMixin, list[Variable], dict[str, Variable]], Variable]] = {
    no_grad: lambda ex, args, kwargs: ex._make_grad_context(False, args, kwargs),
    enable_grad: lambda ex, args, kwargs: ex._make_grad_context(True, args, kwargs),
    set_grad_enabled: ContextMixin._set_grad_enabled,
    is_grad_enabled: ContextMixin._is_grad_enabled,
}


def _grad_mode_api(value: Any) -> Callable | None:
    """How a call of `value` is simulated, if it is one of the grad-mode API."""
    try:
        return _GRAD_MODE_API.get(value)
    except TypeError:  # an unhashable callable
        return None
