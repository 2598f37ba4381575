"""The return path of a translated frame: what the generated code's one call rebuilds and returns.

The simulation ends with the returned Variable; the generated code calls a runner that runs the
SIR and must give back the very structure eager code returns. `template` describes that structure
once, at translation time, with placeholders for what only the run knows (`Out`: a SIR output,
`In`: an input tensor returned as it is, `Passed`: a number or container the generated code passes
in, `View`: a view of an input made again by its op, `NewSet`: a fresh copy of a set, `Made`: an
object the frame constructed, made by the runner from `MadeObjects`); `fill`
puts a run's values in place (`filler` compiles a template into one generated expression that does
the same without walking the template per call), and `runner` is the function the generated code calls.
"""
from __future__ import annotations

from collections import OrderedDict, defaultdict
from dataclasses import dataclass
from typing import Any, Callable

from runtime import Tensor
from sot.ir import ApiStatement, CompiledSIR, EagerSIR, MethodStatement, Statement, Symbol
from sot.opcode_executor import (ConstantVariable, DictVariable, InstanceVariable, ListVariable, ObjectVariable,
                                 OpcodeExecutor, TensorVariable, TupleVariable)
from sot.opcode_executor.live import needed_outputs, reachable
from sot.opcode_executor.side_effects import Refill, SetAttr, SetGlobal
from sot.opcode_executor.variables import (NamedTupleVariable, NewObjectVariable, NumberVariable, SetVariable, Variable,
                                           is_namedtuple_class)
from sot.opcode_executor.wording import shown

__all__ = ["Out", "In", "View", "Passed", "NewSet", "Made", "MadeObjects", "template", "fill", "filler", "runner",
           "view_maker", "exposed_tensors"]

# Tensor methods / runtime functions whose eager result may share memory with their tensor argument
# (the splitting ones return a list of such views)
_VIEWS = frozenset({"reshape", "view", "flatten", "squeeze", "unsqueeze", "transpose", "moveaxis", "t", "flip",
                    "detach", "split", "chunk", "unbind", "unstack"})


@dataclass(frozen=True)
class Out:
    """Position of a returned tensor among the SIR's outputs."""

    index: int


@dataclass(frozen=True)
class In:
    """Position of a returned tensor among the inputs (returned itself, not a copy)."""

    index: int


@dataclass(frozen=True)
class View:
    """A returned tensor made from an input by ops that may return a view (`x.reshape(...)`): made again
    by the same op on the eager input after the graph ran, so it shares memory with the input exactly
    where eager's does (a later in-place write through either is seen through the other)."""

    source: Any  # the template of its tensor argument: an `In`, another `View`, or a bound tensor itself
    statement: Statement
    index: int | None = None  # its position in the list a splitting op returns

    def make(self, source: Any) -> Any:
        """The view, made by the recorded op on `source` as eager code made it."""
        st = self.statement
        if isinstance(st, MethodStatement):
            made = getattr(source, st.method)(*st.args[1:], **st.kwargs)
        else:
            made = st.fn(source, *st.args[1:], **st.kwargs)
        return made if self.index is None else made[self.index]


@dataclass(frozen=True)
class Passed:
    """Position of a dynamic number among the numbers the generated code passes in (returned as it is)."""

    index: int


@dataclass(frozen=True)
class NewSet:
    """A set (or frozenset) the frame made: a copy of the simulated one per call (its iteration order)."""

    items: set | frozenset


@dataclass(frozen=True)
class Made:
    """An object the frame constructed: the `index`-th of the run's `MadeObjects`, which the runner puts
    last among the run's values (`v[-1][index]`)."""

    index: int


class MadeObjects:
    """The objects the frame constructed that the caller reaches (returned, stored by a side effect, live
    at a break), each made once per run, so every place holding one holds the same object, as eagerly.

    `made(values, inputs, passed)` makes them after the graph ran: each blank (`object.__new__`: the class
    was checked to make its objects that way, and its identity is guarded) before any gets its attributes
    (`__dict__` filled in the order the frame first set them), so objects may hold each other; it returns
    the run's values with the tuple of them last (see `Made`)."""

    def __init__(self) -> None:
        self.objects: list[NewObjectVariable] = []
        self.attrs: list[dict[str, Any]] = []

    def index(self, ex: OpcodeExecutor, var: NewObjectVariable, outputs: list[Symbol], passed: list[Variable] | None,
              exposed: frozenset[Symbol]) -> Made:
        """The `Made` of `var`, its attributes' templates built when first met."""
        for k, known in enumerate(self.objects):
            if known is var:
                return Made(k)
        self.objects.append(var)
        self.attrs.append({})
        k = len(self.objects) - 1
        self.attrs[k] = {name: template(ex, value, outputs, passed, exposed, self) for name, value in var.attrs.items()}
        return Made(k)

    def collect(self, ex: OpcodeExecutor, values: list[Variable], outputs: list[Symbol], passed: list[Variable],
                exposed: frozenset[Symbol]) -> None:
        """Register every object the frame made that `values` reach (a break's live values)."""
        for var in reachable(values):
            if isinstance(var, NewObjectVariable):
                self.index(ex, var, outputs, passed, exposed)

    def maker(self) -> Callable[[tuple, tuple, tuple], tuple] | None:
        """`made` (see the class docstring) for the objects registered; None when there are none."""
        if not self.objects:
            return None
        classes = tuple(type(var.value) for var in self.objects)
        attrs = tuple(filler(shape) for shape in self.attrs)

        def made(values: tuple, inputs: tuple, passed: tuple) -> tuple:
            objects = tuple(object.__new__(cls) for cls in classes)
            values = (*values, objects)
            for obj, fill_attrs in zip(objects, attrs):
                obj.__dict__.update(fill_attrs(values, inputs, passed))
            return values
        return made


def template(ex: OpcodeExecutor, var: Variable, outputs: list[Symbol], passed: list[Variable] | None = None,
             exposed: frozenset[Symbol] = frozenset(), made: MadeObjects | None = None) -> Any:
    """The returned value's shape: an index into the SIR outputs per tensor, tuples, lists, dicts, constants.
    A dynamic number is an index into `passed`, the values the generated code loads for the runner (None:
    it cannot load them, so the number's value is read: NumberNeeded keeps it static); so is a list,
    dict or object from outside the frame, returned or stored as the very object eager code would (its
    own writes are replayed into it; with `passed` None a list's or dict's copy of its items). A view of an
    input, or of a computed tensor in `exposed` (see `exposed_tensors`), is made again from it after the
    graph (`View`). An object the frame constructed is a `Made` of `made` (None: it cannot be rebuilt)."""
    if passed is not None and (isinstance(var, NumberVariable) or (
            isinstance(var, (ListVariable, DictVariable, InstanceVariable)) and ex.reloadable(var))):
        if all(var is not p for p in passed):
            passed.append(var)
        return Passed(next(i for i, p in enumerate(passed) if p is var))
    if isinstance(var, TensorVariable) and var.bound:
        return var.value  # a parameter returned as is
    if isinstance(var, TensorVariable) and any(var is v for v in ex.inputs):
        return In(next(i for i, v in enumerate(ex.inputs) if v is var))  # returned as is, like eager
    if isinstance(var, TensorVariable) and (view := _view_of(ex, var.symbol, _output_of(outputs, exposed))):
        return view
    if isinstance(var, TensorVariable):
        if var.symbol not in outputs:  # a tensor returned twice is one object twice, as in eager
            outputs.append(var.symbol)
        return Out(outputs.index(var.symbol))
    if isinstance(var, TupleVariable):
        items = [template(ex, v, outputs, passed, exposed, made) for v in var.items]
        if isinstance(var, NamedTupleVariable):  # (its generated __new__ only stores the fields)
            return var.kind(*items)
        return items if isinstance(var, ListVariable) else tuple(items)
    if isinstance(var, DictVariable) and var.kind in (dict, OrderedDict, defaultdict):  # (made again from its items)
        items = {k: template(ex, v, outputs, passed, exposed, made) for k, v in var.items.items()}
        if var.kind is defaultdict:  # (its factory: an object its guards pin, as eager's holds it)
            return defaultdict(ex.python_value(var.factory), items)
        return items if var.kind is dict else OrderedDict(items)
    if isinstance(var, NewObjectVariable) and made is not None:
        return made.index(ex, var, outputs, passed, exposed)
    if isinstance(var, SetVariable) and var.copied_in_order():
        return NewSet(var.items)
    if isinstance(var, ConstantVariable) or type(var) is ObjectVariable:  # (a module, class, function, dtype or
        return var.value  # enum member: pinned by identity, or a folded value; the very object eager returns)
    ex.unsupported(f"returns {shown(var)}, which sot cannot rebuild after the graph")


def _output_of(outputs: list[Symbol], exposed: frozenset[Symbol]) -> Callable[[Symbol], Out | None]:
    """The `Out` of an exposed computed tensor (made a SIR output if it is not one yet); None for the others."""
    def out(symbol: Symbol) -> Out | None:
        if symbol not in exposed:
            return None
        if symbol not in outputs:
            outputs.append(symbol)
        return Out(outputs.index(symbol))
    return out


def _view_of(ex: OpcodeExecutor, symbol: Symbol, root: Callable[[Symbol], Any] = lambda symbol: None) -> View | None:
    """The `View` of `symbol` if the SIR makes it by a chain of `_VIEWS` ops with constant arguments,
    recorded in the caller's grad mode, from an input, a bound tensor (a parameter), or a computed tensor
    that `root` gives a source for (None otherwise: the graph's output is returned). The chain is
    followed as far as it goes, so views of views share the one source eager's share."""
    made = next((st for st in ex.builder.build().statements if symbol in st.output_symbols()), None)
    if not isinstance(made, (MethodStatement, ApiStatement)) or made.grad is not None or not made.args:
        return None
    name = made.method if isinstance(made, MethodStatement) else getattr(made.fn, "__name__", "")
    if name not in _VIEWS or not isinstance(made.args[0], (Symbol, Tensor)):
        return None
    if isinstance(made.outputs, Symbol):
        index = None
    elif isinstance(made.outputs, (list, tuple)) and all(isinstance(o, Symbol) for o in made.outputs):
        index = made.outputs.index(symbol)
    else:
        return None
    if not all(_is_constant(a) for a in (*made.args[1:], *made.kwargs.values())):
        return None
    if isinstance(made.args[0], Tensor):  # a bound tensor: pinned by the translation's guards
        return View(made.args[0], made, index)
    inputs = [i for i, v in enumerate(ex.inputs) if v.symbol is made.args[0]]
    source = In(inputs[0]) if inputs else _view_of(ex, made.args[0], root) or root(made.args[0])
    return None if source is None else View(source, made, index)


def exposed_tensors(ex: OpcodeExecutor, values: list[Variable]) -> frozenset[Symbol]:
    """The computed tensors the caller can reach after the frame: in `values` (what it returns, or the
    frames' live values at a break) or stored by a side effect. A view of one of them must share its
    memory, as eager's does, so it is made from it after the graph. (A `WriteBack`'s value is copied
    into its input: the input is what stays reachable.)"""
    records = ex.translation.effects.records
    stored = [r.value for r in records if isinstance(r, (SetAttr, SetGlobal))]
    stored += [r.target for r in records if isinstance(r, Refill)]
    return frozenset(needed_outputs(ex, [*values, *stored]))


def view_maker(ex: OpcodeExecutor, symbol: Symbol, available: frozenset[Symbol] = frozenset()
               ) -> tuple[Callable, Any] | None:
    """`(make, source)` if `symbol` is a `View`: `make(source)` makes it from the input's Variable, the
    bound tensor, or the symbol of a computed tensor in `available` that `source` is (for a break's
    generated code, which passes it on as eager's view)."""
    chain, node = [], _view_of(ex, symbol, lambda s: s if s in available else None)
    while isinstance(node, View):
        chain.append(node)
        node = node.source
    if not chain:
        return None

    def make(source: Any) -> Any:
        for view in reversed(chain):
            source = view.make(source)
        return source
    return make, ex.inputs[node.index] if isinstance(node, In) else node


def _is_constant(value: Any) -> bool:
    """A plain Python constant argument (numbers, strings, None, and tuples/lists of them)."""
    if isinstance(value, (tuple, list)):
        return all(_is_constant(v) for v in value)
    return value is None or type(value) in (int, float, bool, str)


def runner(compiled: CompiledSIR | EagerSIR | None, shape: Any, n_inputs: int) -> Callable:
    """The function the generated code calls (with the tensor inputs, then the passed numbers): run the
    SIR and rebuild the returned structure (`shape`: its `template`)."""
    # the cache's guards already checked every input's shape, dtype and stop_gradient
    if isinstance(shape, Out):  # one tensor returned: the common case, one Python frame per call
        return compiled.output_runner(shape.index)
    rebuild = filler(shape)

    def run(*args: Any) -> Any:
        tensors = args[:n_inputs]
        return rebuild(compiled.run_checked(*tensors) if compiled is not None else (), tensors, args[n_inputs:])
    return run


def fill(node: Any, values: tuple, inputs: tuple, passed: tuple = ()) -> Any:
    """A template (see `template`) with the run's outputs, inputs and passed numbers in place."""
    if isinstance(node, Out):
        return values[node.index]
    if isinstance(node, In):
        return inputs[node.index]
    if isinstance(node, Passed):
        return passed[node.index]
    if isinstance(node, View):
        return node.make(fill(node.source, values, inputs, passed))
    if isinstance(node, NewSet):
        return node.items.copy()
    if isinstance(node, Made):
        return values[-1][node.index]
    if isinstance(node, tuple) and is_namedtuple_class(type(node)):
        return type(node)._make(fill(n, values, inputs, passed) for n in node)
    if isinstance(node, (tuple, list)):
        return type(node)(fill(n, values, inputs, passed) for n in node)
    if isinstance(node, dict):  # (a dict, an OrderedDict or a defaultdict: see `template`)
        items = {k: fill(n, values, inputs, passed) for k, n in node.items()}
        if isinstance(node, defaultdict):
            return defaultdict(node.default_factory, items)
        return items if type(node) is dict else type(node)(items)
    return node


def filler(node: Any) -> Callable[[tuple, tuple, tuple], Any]:
    """`fill` for one template, as a generated function `(values, inputs, passed) -> structure`: the
    template's walk is done once here, so a call only indexes and builds (a cache hit of a function that
    returns a tuple or prints pays for its template on every call)."""
    constants: dict[str, Any] = {}
    source = f"lambda v, i, p: {_expression(node, constants)}"
    return eval(compile(source, "<sot return template>", "eval"), constants)  # noqa: S307 - our own source


def _expression(node: Any, constants: dict[str, Any]) -> str:
    """Python source computing what `fill(node, v, i, p)` returns; objects it cannot spell go in `constants`."""
    def constant(value: Any) -> str:
        name = f"c{len(constants)}"
        constants[name] = value
        return name

    if isinstance(node, Out):
        return f"v[{node.index}]"
    if isinstance(node, In):
        return f"i[{node.index}]"
    if isinstance(node, Passed):
        return f"p[{node.index}]"
    if isinstance(node, View):
        return f"{constant(node.make)}({_expression(node.source, constants)})"
    if isinstance(node, NewSet):
        return f"{constant(node.items)}.copy()"
    if isinstance(node, Made):
        return f"v[-1][{node.index}]"
    if type(node) is tuple:
        return f"({''.join(_expression(n, constants) + ', ' for n in node)})"
    if type(node) is list:
        return f"[{', '.join(_expression(n, constants) for n in node)}]"
    if type(node) is dict:
        return f"{{{', '.join(f'{constant(k)}: {_expression(n, constants)}' for k, n in node.items())}}}"
    if isinstance(node, (tuple, list, dict)):  # a subclass: rebuilt as `fill` rebuilds it
        return f"{constant(fill)}({constant(node)}, v, i, p)"
    return constant(node)
