"""SIRBuilder: records calls into a StatementIR while the opcode executor simulates a frame.

Interface (what the executor calls; Symbols stand for tensors, anything else is a constant):

    b = SIRBuilder()                                   # or SIRBuilder("SIR_7")
    x = b.add_input(Meta.make([4, 8], "float32"))      # -> Symbol
    y = b.call_api(runtime.matmul, (x, w_sym))         # -> the result with Symbols for tensors
    z = b.call_method("__add__", y, (1.0,))
    o = b.call_layer(linear, (z,))
    (p, q) = b.call_sir(other_sir, (o, x))
    b.set_outputs([o, p])
    sir = b.build()                                    # -> StatementIR

Every call is replayed at once in static mode on a scratch Program (static Variables standing
for the symbols; see `replay`), so only the op registry's meta functions run, never a kernel:
output shapes, dtypes and stop_gradient come from the resulting Variables, and a call eager
code would reject raises here the same exception type with the same message (static mode's
"[while building op ...]" note is taken off). The previous mode (dynamic or static) and default
programs are restored after each call, whatever happens.

NotImplementedError means "cannot be captured, run this eagerly": a call that needs a tensor's
value (`if x.sum() > 0:` inside a layer, `x.numpy()`), or one that writes a symbol's tensor in
place (`paddle.assign(y, output=x)`: statements are single assignments). Writes to bound tensors
(BatchNorm's running statistics) are allowed; the compiled SIR writes them back. Eager tensors
among the arguments (a parameter an inlined forward reads, a global tensor) are bound, not
copied. A call whose result holds no new tensor and appends no op (`paddle.is_tensor(x)`)
returns its Python result and records nothing.

`grad_mode` is the grad mode of the simulated code at the point of the next call (None: the
caller's, whatever it is at run time; False: inside `with paddle.no_grad():`; True: inside
`enable_grad()`); each statement keeps it (`Statement.grad`). Where it is off (or None and the
translation runs with grad off) the new ops' outputs are marked stop_gradient, so the metas of
the result and of everything computed from it alone say what eager's flags say.

`locate`, when set (the opcode executor sets it to its `where` while it simulates a frame), gives
the file:line each statement is recorded at (`Statement.where`).
"""
from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any, Callable, Sequence

from runtime import Tensor
from runtime.autograd import is_grad_enabled
from runtime.ops.registry import all_ops
from runtime.static import Program, Variable, appending_to

from .pytree import tree_leaves, tree_map
from .renaming import unrenamable
from .replay import Binder, cut_gradients, resolve, run_statement
from .sir import StatementIR
from .statement import ApiStatement, LayerStatement, MethodStatement, SirStatement, Statement
from .symbol import Meta, Symbol

if TYPE_CHECKING:
    from runtime.nn import Layer

__all__ = ["SIRBuilder", "NeedsTensorValue", "WritesSymbol", "DynamicShapeOp"]

_sir_ids = itertools.count()
_WRAPPED = (ValueError, TypeError, IndexError)  # the types static mode re-raises with a note
_DYNAMIC_SHAPE_OPS = frozenset(name for name, op in all_ops().items() if op.dynamic_shape)


class NeedsTensorValue(NotImplementedError):
    """The call needs a tensor's value at translation time (`bool(x)`, `x.numpy()`): not capturable."""


class WritesSymbol(NotImplementedError):
    """The call writes a symbol's tensor in place: statements assign each symbol once."""


class DynamicShapeOp(NotImplementedError):
    """The call appends an op whose output shape depends on tensor values (nonzero, unique, ...),
    and the caller did not allow that (`allow_dynamic_shape`)."""


class SIRBuilder:
    """Builds one StatementIR call by call, checking each with the registry's meta functions."""

    def __init__(self, name: str | None = None):
        self.name = f"SIR_{next(_sir_ids)}" if name is None else name
        self._program = Program()
        self._block = self._program.global_block()
        self._binder = Binder(self._block)
        self._inputs: list[Symbol] = []
        self._statements: list[Statement] = []
        self._outputs: list[Symbol] = []
        self._vars: dict[Symbol, Variable] = {}
        self._symbols: dict[int, Symbol] = {}  # id(Variable) -> the symbol it stands for
        self._by_var_name: dict[str, Symbol] = {}
        self._names = itertools.count()
        self.grad_mode: bool | None = None
        # file:line of the user's code making the next call (set by the frame being simulated): each
        # statement keeps it, so a SIR's text says which line each op came from
        self.locate: Callable[[], str] | None = None
        # what the executor needs to capture an in-place update by renaming (see `renaming`): the symbols
        # it may not rename (with why), and the statements that read each symbol
        self.unrenamable: dict[Symbol, str] = {}
        self.readers: dict[Symbol, list[Statement]] = {}
        # the place every tensor of this SIR lives on (None until one is read or made): the compiled
        # Program runs its kernels there
        self.place: Any = None

    # ------------------------------------------------------------ inputs and outputs
    def add_input(self, meta: Meta) -> Symbol:
        """A new input of the SIR, fed by the caller at run time."""
        if not isinstance(meta, Meta):
            raise TypeError(f"add_input: argument 'meta' must be a Meta, got {type(meta).__name__}")
        sym = self._new_symbol(meta)
        var = self._block.create_var(sym.name, meta.shape, meta.dtype, stop_gradient=meta.stop_gradient)
        self._bind(sym, var)
        self._inputs.append(sym)
        return sym

    def set_outputs(self, outputs: Any) -> None:
        """The symbols the SIR returns (any nesting; flattened in order)."""
        leaves = tree_leaves(outputs)
        for leaf in leaves:
            if not isinstance(leaf, Symbol) or leaf not in self._vars:
                raise ValueError(f"set_outputs: {leaf!r} is not a symbol of {self.name}")
        self._outputs = leaves

    def mark(self) -> tuple[int, int, bool | None]:
        """A point to come back to with `rollback` (the statements and inputs recorded so far, the grad mode)."""
        return len(self._statements), len(self._inputs), self.grad_mode

    def rollback(self, mark: tuple[int, int, bool | None]) -> None:
        """Forget the statements and inputs recorded after `mark` and any grad-mode change since (a call
        that will run for real instead)."""
        n_statements, n_inputs, self.grad_mode = mark
        del self._statements[n_statements:]
        del self._inputs[n_inputs:]

    def build(self) -> StatementIR:
        """The StatementIR recorded so far."""
        return StatementIR(self.name, self._inputs, self._outputs, self._statements)

    # ------------------------------------------------------------ the four statement kinds
    def call_api(self, fn: Callable, args: Sequence = (), kwargs: dict | None = None,
                 allow_dynamic_shape: bool = True) -> Any:
        """Record `fn(*args, **kwargs)` for a runtime public function; its result with Symbols."""
        return self._record(ApiStatement(fn, tuple(args), kwargs or {}, None), allow_dynamic_shape)

    def call_method(self, name: str, self_sym: Symbol | Tensor, args: Sequence = (), kwargs: dict | None = None,
                    allow_dynamic_shape: bool = True) -> Any:
        """Record the Tensor method call `self_sym.<name>(*args, **kwargs)`; its result with Symbols.
        `self_sym` may be an eager tensor (a parameter): bound, like eager tensors among the arguments."""
        if not isinstance(self_sym, (Symbol, Tensor)):
            raise TypeError(f"call_method: argument 'self_sym' must be a Symbol or Tensor, got "
                            f"{type(self_sym).__name__}")
        return self._record(MethodStatement(name, (self_sym, *args), kwargs or {}, None), allow_dynamic_shape)

    def call_layer(self, layer: "Layer", args: Sequence = (), kwargs: dict | None = None) -> Any:
        """Record `layer(*args, **kwargs)`; its parameters are bound, not copied, when lowered."""
        return self._record(LayerStatement(layer, tuple(args), kwargs or {}, None))

    def call_sir(self, sir: StatementIR, args: Sequence[Symbol]) -> tuple[Symbol, ...]:
        """Record a call of another SIR on `args` (one per input of it); its output symbols."""
        args = tuple(args)
        if len(args) != len(sir.inputs):
            raise TypeError(f"call_sir: {sir.name} takes {len(sir.inputs)} inputs, got {len(args)}")
        for i, (a, s) in enumerate(zip(args, sir.inputs)):
            got = a.meta if isinstance(a, Symbol) else None
            if got is None or got.dtype != s.meta.dtype or len(got.shape) != len(s.meta.shape) or any(
                    want not in (-1, have) for want, have in zip(s.meta.shape, got.shape)):
                raise TypeError(f"call_sir: argument {i} of {sir.name} must be a symbol of {s.meta}, got "
                                f"{got if got is not None else type(a).__name__}")
        return self._record(SirStatement(sir, args, ()))

    # ------------------------------------------------------------ recording
    def _record(self, st: Statement, allow_dynamic_shape: bool = True) -> Any:
        for leaf in tree_leaves((st.args, st.kwargs)):
            if isinstance(leaf, Symbol) and leaf not in self._vars:
                raise ValueError(f"{leaf!r} is not a symbol of {self.name}")
        n_ops = len(self._block.ops)
        error = None
        with appending_to(self._program):
            args, kwargs = tree_map(lambda x: resolve(x, self._vars, self._binder), (st.args, st.kwargs))
            try:
                result = run_statement(st, args, kwargs, self._binder)
            except _WRAPPED as e:
                error = _eager_error(e, st)
        if error is not None:
            raise error
        new_ops = self._block.ops[n_ops:]
        self._check_no_symbol_written(st, new_ops)
        st.grad = self.grad_mode
        st.where = self.locate() if self.locate is not None else None
        if not self._grad_enabled():
            cut_gradients(self._block, n_ops)
        if not allow_dynamic_shape:
            dynamic = [op.type for op in new_ops if op.type in _DYNAMIC_SHAPE_OPS]
            if dynamic:
                raise DynamicShapeOp(f"{st.kind} statement appends {dynamic[0]}, whose output shape depends on "
                                     "tensor values")
        before = len(self._vars)
        outputs = tree_map(self._symbol_of, result)
        self.unrenamable.update(unrenamable(st, new_ops, outputs, self._block, self._by_var_name.get,
                                            lambda s: self._vars[s].name))
        if len(self._vars) == before and not new_ops:
            return outputs
        st.outputs = outputs
        self._statements.append(st)
        for leaf in tree_leaves((st.args, st.kwargs)):
            if isinstance(leaf, Symbol):
                self.readers.setdefault(leaf, []).append(st)
        return outputs

    def _symbol_of(self, value: Any) -> Any:
        """A result leaf as the caller sees it: the Symbol of a Variable (new or known), else itself."""
        if not isinstance(value, Variable):
            return value
        sym = self._symbols.get(id(value))
        if sym is None:
            meta = Meta.from_tensor(value)
            if not self._grad_enabled():  # eager ops under no_grad give stop_gradient outputs
                meta = meta._replace(stop_gradient=True)
            sym = self._new_symbol(meta)
            self._bind(sym, value)
        return sym

    def _grad_enabled(self) -> bool:
        """Whether the call being recorded runs with grad on (an inherited mode: the translation's)."""
        return is_grad_enabled() if self.grad_mode is None else self.grad_mode

    def _check_no_symbol_written(self, st: Statement, ops: list) -> None:
        for name in (name for op in ops for name in op.outputs):
            sym = self._by_var_name.get(name)
            if sym is not None and not self._vars[sym].persistable:
                raise WritesSymbol(
                    f"{st.kind} statement writes {sym.name} in place; a StatementIR assigns each symbol once")

    def _new_symbol(self, meta: Meta) -> Symbol:
        return Symbol(f"var_{next(self._names)}", meta)

    def _bind(self, sym: Symbol, var: Variable) -> None:
        self._vars[sym] = var
        self._symbols[id(var)] = sym
        self._by_var_name[var.name] = sym


def _eager_error(e: Exception, st: Statement) -> Exception:
    """The exception eager code raises for this call: static mode's re-raise with its note taken off;
    a call that needs a tensor's value (`bool(x)`, `x.numpy()`) cannot be captured at all."""
    if isinstance(e, TypeError) and "static Variable" in str(e):
        error = NeedsTensorValue(f"{st.kind} statement needs a tensor value at translation time: {e}")
        error.__cause__ = e
        return error
    original = e.__context__
    if (e.__suppress_context__ and type(original) is type(e)
            and str(e).startswith(f"{original} [while building op ")):
        return original
    return e
