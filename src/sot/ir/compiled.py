"""CompiledSIR: a StatementIR as a callable on eager tensors, run as static Programs.

    f = CompiledSIR(sir)              # lowers now (see `lower`)
    outputs = f(*eager_inputs)        # a tuple of eager Tensors, one per SIR output

One `Executor` and one `Scope` per CompiledSIR; each call checks the inputs against the SIR's
input metas (shape, -1 matching any size, dtype, stop_gradient), puts the arrays of the bound
eager tensors into their scope cells as they are (zero copy: parameters updated by an optimizer
between calls are simply read) and runs the cached InterpreterCore. A program write to a bound
tensor (BatchNorm's running statistics in training) is written back into that tensor in place.

Autograd (docs/sot-internals.md, "A compiled forward is one autograd node"): when grad mode is on and an
output depends on an input or bound tensor that requires grad, the call goes through
`runtime.autograd.PyLayer`, so it records ONE node on the eager tape. Its forward runs the
Program and also fetches the intermediates the gradient needs; its backward runs the gradient
Program, built once (per set of bound tensors' stop_gradient flags) with
`static.gradients(outputs, inputs + bound, target_gradients)` on a copy of the forward and cut
down to the gradient ops, whose feeds are the inputs, those intermediates and the output
gradients. Gradients reach eager inputs and parameters as any eager op's do (accumulated into
`.grad`). A bound tensor written in place between the forward and the backward raises, as eager
autograd does. A backward with `create_graph=True` (double backward, `paddle.grad(...,
create_graph=True)`) cannot use the gradient Program, whose ops are not on the tape: the node then
runs its forward again eagerly, under the tape, from the same tensors (with the random generator's
state and the values of the bound tensors the Program writes as they were at the forward), and
differentiates that with `create_graph=True`, so the gradients it returns are differentiable again.
Programs run on the executor of the place the translation's tensors live on (`place`; the default place
when it read none). A kernel that fails on the values raises what eager code raises
(the executor's note naming the op and its callsite in the replay is taken off).
"""
from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator, NoReturn, Sequence

import numpy as np

from runtime import static
from runtime.autograd import PyLayer, PyLayerContext, grad, is_grad_enabled, no_grad
from runtime.generator import get_rng_state, set_rng_state
from runtime.place import current_place
from runtime.executor import Executor, Scope
from runtime.static import Program, appending_to
from runtime.tensor import Tensor

from .eager import run_eagerly
from .lower import Lowered, lower
from .sir import StatementIR
from .symbol import Meta

__all__ = ["CompiledSIR"]

_wrap = Tensor._wrap


class CompiledSIR:
    """Runs `sir` on eager tensors: forward Program cached, backward Program built once when needed."""

    def __init__(self, sir: StatementIR, place: Any = None):
        self.sir = sir
        self._executor = Executor(current_place() if place is None else place)
        self._scope = Scope()
        first = lower(sir)
        self._bound: tuple[Tensor, ...] = tuple(first.bindings.values())
        self._cells = [(self._scope.var(name), t) for name, t in first.bindings.items()]
        self._exact = None if any(-1 in s.meta.shape for s in sir.inputs) else \
            [(s.meta.shape, s.meta.dtype, s.meta.stop_gradient) for s in sir.inputs]
        self._first = _Variant(self, first)
        self._variants = {self._flags(): self._first}
        # Without bound tensors and with no output that can require grad, every run is the first lowering's
        # inference run whatever the grad mode (the guards fixed the inputs' stop_gradient): one generated
        # function (a graph break's prefix runs through it).
        self._inference = None if self._cells or self._first.differentiable else \
            _inference_runner(self._first, sir.name)

    @property
    def lowered(self) -> Lowered:
        """The Program, feed/fetch names and bindings of the first lowering (for dumps and tools)."""
        return self._first.lowered

    def __call__(self, *inputs: Tensor) -> tuple[Tensor, ...]:
        self._check(inputs)
        return self.run_checked(*inputs)

    def output_runner(self, index: int) -> Callable[..., Tensor]:
        """A callable `(*inputs) -> output index` for a translated function that returns one SIR output: the
        cache-hit path. Inputs are already checked, as for `run_checked`."""
        if self._inference is None:
            run_checked = self.run_checked
            return lambda *inputs: run_checked(*inputs)[index]
        return _inference_runner(self._first, self.sir.name, index)

    def tuple_runner(self) -> Callable[..., tuple[Tensor, ...]]:
        """A callable `(*inputs) -> every output` for a graph break's prefix: the generated inference run
        itself where it applies (no `run_checked` frame between), else `run_checked`."""
        if self._inference is None:
            return self.run_checked
        return _inference_runner(self._first, self.sir.name, positional=True)

    def build_gradient(self) -> None:
        """Build the gradient Program now if the outputs can require grad (raising what building it raises),
        instead of at the first forward under grad: a translation with dynamic dims checks its gradient rules
        with it. Built with grad mode off, as SIRFunction.forward builds it (with it on, rules pick their
        double-differentiable forms: BatchNorm's would update the running statistics a second time)."""
        if self._first.differentiable:
            with no_grad():
                self._first.grad  # noqa: B018 - the property builds and keeps the plan

    def run_checked(self, *inputs: Tensor) -> tuple[Tensor, ...]:
        """Run on inputs already known to match the SIR's input metas (the translated code's
        guards checked exactly that, so a cache hit does not check them twice)."""
        if self._inference is not None:
            return self._inference(inputs)
        if is_grad_enabled():
            variant = self._variants.get(self._flags()) or self._relower()
            if variant.differentiable:
                return tuple(SIRFunction.apply(variant, len(inputs), *inputs, *self._bound))
        else:
            variant = self._first
        return tuple(_wrap(a) for a in variant.run([t._data for t in inputs]))

    # ------------------------------------------------------------ helpers
    def _flags(self) -> tuple[bool, ...]:
        return tuple(t.stop_gradient for t in self._bound)

    def _relower(self) -> "_Variant":
        """A bound tensor's stop_gradient changed (a frozen parameter): lower for the new flags."""
        lowered = lower(self.sir)
        if list(lowered.bindings) != [c.name for c, _ in self._cells]:
            raise RuntimeError(f"{self.sir.name}: lowering again bound other tensors "
                               f"({list(lowered.bindings)}, before {[c.name for c, _ in self._cells]})")
        variant = self._variants[self._flags()] = _Variant(self, lowered)
        return variant

    def _check(self, inputs: Sequence[Any]) -> None:
        try:  # the common case, one comparison: exactly the metas of the SIR
            if [(t._data.shape, t._data.dtype, t.stop_gradient) for t in inputs] == self._exact:
                return
        except AttributeError:
            pass
        expected = self.sir.inputs
        if len(inputs) != len(expected):
            raise TypeError(f"{self.sir.name} takes {len(expected)} inputs, got {len(inputs)}")
        for i, (t, s) in enumerate(zip(inputs, expected)):
            if not isinstance(t, Tensor):
                raise TypeError(f"{self.sir.name}: input {i} ({s.name}) must be a Tensor, got {type(t).__name__}")
            a, m = t._data, s.meta
            if (a.dtype != m.dtype or a.ndim != len(m.shape) or t.stop_gradient != m.stop_gradient
                    or any(d != -1 and d != n for d, n in zip(m.shape, a.shape))):
                raise ValueError(f"{self.sir.name}: input {i} ({s.name}) must be {m}, got {Meta.from_tensor(t)}")

    def _run(self, core: Any, feeds: list, written: Sequence = ()) -> list:
        """Run a core with the bound arrays in place; write program updates back into bound tensors."""
        for cell, t in self._cells:
            cell.value = t._data
        try:
            out = core.run(feeds)
        except Exception as e:  # noqa: BLE001 - re-raised as eager code raises it
            _raise_as_eager(e)
        for cell, t in written:
            if cell.value is not t._data:
                t.set_value(cell.value)
                cell.value = t._data
        return out


def _inference_runner(variant: "_Variant", name: str, index: int | None = None,
                      positional: bool = False) -> Callable[..., Any]:
    """The inference run of `variant` as one generated function: of the tuple of input tensors, returning the tuple
    of outputs (what `run_checked` calls: a plain call, where `f(*inputs)` takes Python 3.11's slower call path
    that the interpreter does not inline; `positional`: of the input tensors, for a break's generated code), or,
    for `index`, of the input tensors, returning only that output. The
    feed list is written out in the core's order: a comprehension building it, a generator building the tuple and
    the calls between `run_checked`, `_Variant.run` and `CompiledSIR._run` cost more than the kernels of a one-op
    graph."""
    params = [f"t{i}" for i in range(len(variant.lowered.input_names))]
    feeds = ", ".join(f"t{i}._data" for i in variant._feed_order)
    if index is None:
        unpack = f"    {', '.join(params)}, = inputs\n" if params and not positional else ""
        outs = "".join(f"_wrap(out[{i}]), " for i in variant._out_index)
        source = (f"def run_sir({', '.join(params) if positional else 'inputs'}):\n{unpack}    try:\n"
                  f"        out = run([{feeds}])\n"
                  f"    except Exception as e:\n        _raise_as_eager(e)\n    return ({outs})\n")
    else:
        source = (f"def run_sir({', '.join(params)}):\n    try:\n"
                  f"        return _wrap(run([{feeds}])[{variant._out_index[index]}])\n"
                  "    except Exception as e:\n        _raise_as_eager(e)\n")
    namespace = {"_wrap": _wrap, "run": variant._core.run, "_raise_as_eager": _raise_as_eager}
    exec(compile(source, f"<inference run of {name}>", "exec"), namespace)  # noqa: S102 - generated
    return namespace["run_sir"]


def _raise_as_eager(e: Exception) -> NoReturn:
    """Raise what eager code raises when a kernel fails on the values (a negative integer power, `-` on
    bools: nothing a meta function sees): the executor's re-raise that names the op, its input shapes and
    its callsite in sot's replay (meaningless to the user) is taken off; any other error goes on as is."""
    original = e.__cause__
    if type(original) is type(e) and str(e).startswith(f"{original} [operator "):
        raise original from None
    raise e


class _Variant:
    """One lowering of the SIR (for one set of bound flags) with its executor cores."""

    def __init__(self, owner: CompiledSIR, lowered: Lowered):
        self.owner = owner
        self.lowered = lowered
        block = lowered.program.global_block()
        self.out_requires = tuple(not block.var(n).stop_gradient for n in lowered.output_names)
        self.differentiable = any(self.out_requires)
        self.feed_names = sorted(lowered.input_names)
        self._feed_order = [lowered.input_names.index(n) for n in self.feed_names]
        fetch = list(dict.fromkeys(lowered.output_names))
        self._out_index = [fetch.index(n) for n in lowered.output_names]
        self._core = owner._executor.core_for(lowered.program, self.feed_names, fetch, owner._scope)
        self._core.name = owner.sir.name   # what a profile calls its runs
        stored = {n for op in block.ops for n in op.outputs}
        self.written = [(cell, t) for cell, t in owner._cells if cell.name in stored]
        self.random = any(op.opdef.random for op in block.ops)  # (an eager recompute must draw the same numbers)
        self._grad: _GradientPlan | None = None

    def run(self, arrays: list) -> list:
        """The output arrays of one inference run on the input arrays (in SIR input order)."""
        out = self.owner._run(self._core, [arrays[i] for i in self._feed_order], self.written)
        return [out[i] for i in self._out_index]

    @property
    def grad(self) -> "_GradientPlan":
        if self._grad is None:
            self._grad = _GradientPlan(self)
        return self._grad


class _GradientPlan:
    """The forward run that keeps what the gradient needs, and the gradient Program (built once)."""

    def __init__(self, variant: _Variant):
        owner, lowered = variant.owner, variant.lowered
        self.owner, self.variant = owner, variant
        clone = lowered.program.clone()
        block = clone.global_block()
        n_forward = len(block.ops)
        self.targets = [n for n in dict.fromkeys(n for n, r in zip(lowered.output_names, variant.out_requires) if r)]
        args = [*lowered.input_names, *lowered.bindings]  # the PyLayer's tensor arguments, in order
        wrt = [n for n in dict.fromkeys(args) if not block.var(n).stop_gradient]
        with appending_to(clone):
            douts = [static.data(f"{n}@DOUT", block.var(n).shape, block.var(n).dtype) for n in self.targets]
            grads = static.gradients([block.var(n) for n in self.targets], [block.var(n) for n in wrt],
                                     target_gradients=douts)
        backward, feeds = _extract(block, n_forward)
        known = {*lowered.input_names, *(d.name for d in douts)}
        self.saved = [n for n in feeds if n not in known]
        grad_of = {n: g.name for n, g in zip(wrt, grads) if g is not None}
        self.arg_grads = [grad_of.get(n) for n in args]  # grad var name per tensor argument (or None)
        fetch_grads = list(dict.fromkeys(g for g in self.arg_grads if g is not None))
        self._grad_index = [None if g is None else fetch_grads.index(g) for g in self.arg_grads]
        reads = {n for op in backward.global_block().ops for n in op.inputs}
        self.checked = [i for i, n in enumerate(args) if n in reads]  # arguments whose values backward reads
        self.backward_program = backward
        self.feed_names = sorted(feeds)
        fetch = list(dict.fromkeys([*lowered.output_names, *self.saved]))
        self._out_index = [fetch.index(n) for n in lowered.output_names]
        self._saved_index = [fetch.index(n) for n in self.saved]
        self._forward = owner._executor.core_for(lowered.program, variant.feed_names, fetch, owner._scope)
        self._backward = owner._executor.core_for(backward, self.feed_names, fetch_grads, owner._scope)
        self._forward.name, self._backward.name = owner.sir.name, f"{owner.sir.name} (backward)"   # a Backward event

    def forward(self, arrays: list) -> tuple[list, dict]:
        """Outputs and {name: array} of the saved intermediates, for inputs in SIR input order."""
        out = self.owner._run(self._forward, [arrays[i] for i in self.variant._feed_order], self.variant.written)
        return [out[i] for i in self._out_index], {n: out[i] for n, i in zip(self.saved, self._saved_index)}

    def backward(self, values: dict, out_grads: Sequence[Tensor]) -> list:
        """One gradient array (or None) per tensor argument, from the saved values and output grads."""
        feeds = dict(values)
        for name in self.targets:
            feeds[f"{name}@DOUT"] = None
        for name, g in zip(self.variant.lowered.output_names, out_grads):
            key = f"{name}@DOUT"
            if key in feeds:
                feeds[key] = g._data if feeds[key] is None else feeds[key] + g._data
        out = self.owner._run(self._backward, [feeds[n] for n in self.feed_names])
        return [None if i is None else out[i] for i in self._grad_index]


def _extract(block: Any, start: int) -> tuple[Program, list[str]]:
    """A Program of the ops of `block` from `start` on, and the names it must be fed, in first-read order.

    Persistable vars are not fed: they are read from the scope, where the bound tensors are."""
    program = Program()
    new = program.global_block()
    feeds: list[str] = []
    for op in block.ops[start:]:
        for name in op.inputs:
            if name is not None and name not in new.vars:
                v = block.var(name)
                new.create_var(name, v.shape, v.dtype, persistable=v.persistable, stop_gradient=v.stop_gradient,
                               is_parameter=v.is_parameter)
                if not v.persistable:
                    feeds.append(name)
        for name in op.outputs:
            if name not in new.vars:
                v = block.var(name)
                new.create_var(name, v.shape, v.dtype, persistable=v.persistable, stop_gradient=v.stop_gradient)
        new.append_op(op.type, op.inputs, op.outputs, op.attrs, op.callsite)
    return program, feeds


class SIRFunction(PyLayer):
    """The autograd face of a compiled SIR: forward runs the Program, backward the gradient Program."""

    @staticmethod
    def forward(ctx: PyLayerContext, variant: _Variant, n_inputs: int, *tensors: Tensor) -> tuple[Tensor, ...]:
        plan = variant.grad
        ctx.rng = get_rng_state() if variant.random else None
        ctx.written_before = [(t, np.array(t._data, copy=True)) for _, t in variant.written]
        outs, saved = plan.forward([t._data for t in tensors[:n_inputs]])
        ctx.plan = plan
        ctx.tensors, ctx.n_inputs = tensors, n_inputs  # for a recompute under create_graph=True
        ctx.values = {**{n: t._data for n, t in zip(variant.lowered.input_names, tensors)}, **saved}
        ctx.checked = [(tensors[i], tensors[i]._version) for i in plan.checked]
        results = tuple(_wrap(a) for a in outs)
        ctx.mark_non_differentiable(*(r for r, req in zip(results, variant.out_requires) if not req))
        return results

    @staticmethod
    def backward(ctx: PyLayerContext, *out_grads: Tensor) -> tuple[Tensor | None, ...]:
        for t, version in ctx.checked:
            if t._version != version:
                raise RuntimeError(f"a tensor (shape {t.shape}) needed to compute the gradient of a compiled "
                                   f"subgraph was modified by an in-place operation after it was used (version "
                                   f"{version} -> {t._version}); use an out-of-place op or clone() it first")
        if is_grad_enabled():  # create_graph=True: the tape runs backward with grad on
            return _recomputed_grads(ctx, out_grads)
        grads = ctx.plan.backward(ctx.values, out_grads)
        return tuple(None if g is None else _wrap(g) for g in grads)


def _recomputed_grads(ctx: PyLayerContext, out_grads: Sequence[Tensor]) -> tuple[Tensor | None, ...]:
    """The gradients of a compiled node for a backward with create_graph=True: its SIR run again eagerly
    under the tape and differentiated with the tape, so each gradient is a tensor on the tape that can be
    differentiated again. The inputs enter the recompute through `_Gate`s, closed while this node's
    gradients are taken: they are the partial derivatives of this node alone (the tape would otherwise
    also add what flows into an input, or a parameter, through the nodes that made the inputs)."""
    variant, tensors, n = ctx.plan.variant, ctx.tensors, ctx.n_inputs
    gate = _Gate.Closed()
    inputs = [t if t.stop_gradient else _Gate.apply(t, gate) for t in tensors[:n]]
    with _as_at_forward(ctx):
        outs = run_eagerly(variant.owner.sir, tuple(inputs))
    pairs = [(o, g) for o, g, req in zip(outs, out_grads, variant.out_requires)
             if req and isinstance(o, Tensor) and not o.stop_gradient]
    arguments = [*inputs, *tensors[n:]]
    wrt = [t for t in arguments if not t.stop_gradient]
    try:
        found = iter(grad([o for o, _ in pairs], wrt, grad_outputs=[g for _, g in pairs], create_graph=True,
                          allow_unused=True) if pairs and wrt else [None] * len(wrt))
    finally:
        gate.closed = False  # from now on the gates pass gradients: the result's own backward reaches the inputs
    return tuple(None if t.stop_gradient else next(found) for t in arguments)


class _Gate(PyLayer):
    """The identity on the tape, whose backward passes no gradient while its `Closed` flag is set."""

    class Closed:
        """The flag the gates of one recompute share."""

        closed = True

    @staticmethod
    def forward(ctx: PyLayerContext, x: Tensor, gate: "_Gate.Closed") -> Tensor:
        ctx.gate = gate
        return x

    @staticmethod
    def backward(ctx: PyLayerContext, g: Tensor) -> Tensor | None:
        return None if ctx.gate.closed else g


@contextlib.contextmanager
def _as_at_forward(ctx: PyLayerContext) -> Iterator[None]:
    """The random generator and the bound tensors the Program writes as they were when the node's forward
    ran, for a recompute; as they are now again afterwards (the recompute's draws and writes are undone)."""
    now_rng = get_rng_state() if ctx.rng is not None else None
    now = [(t, np.array(t._data, copy=True)) for t, _ in ctx.written_before]
    if ctx.rng is not None:
        set_rng_state(ctx.rng)
    for t, value in ctx.written_before:
        t.set_value(value)
    try:
        yield
    finally:
        if now_rng is not None:
            set_rng_state(now_rng)
        for t, value in now:
            t.set_value(value)
