"""Backward for static programs: `append_backward` and `gradients`.

The gradient ops come from the op registry's gradient rules, the SAME rules eager autograd
runs: a rule is written with public ops, so calling it in static mode (with a context that
offers what an autograd Node offers, but holding Variables) appends its ops. The walk
follows Paddle's `append_backward`:

1. the ops on the path: walk back from the targets, keeping the ops that write a var the
   targets depend on; a var needs a gradient when it is a leaf with `stop_gradient=False`
   (or a requested input) or is a differentiable output of an op with an input that needs
   one, and it is not in `no_grad_set` (flags are fixed when ops are built, as in eager);
2. the starting gradient: one `full` op (Paddle's `fill_constant`) of 1.0 with the loss's shape;
3. for each op on the path, last first: the gradients of its outputs are complete (every
   reader comes later in the block), so the partial gradients of each output are summed by
   ONE `add_n` op (Paddle's `sum`) and named `<var>@GRAD`; missing gradients of other
   outputs are `zeros_like` them; the rule's ops are appended;
4. leaves get their `<var>@GRAD` the same way, and `(param, grad)` pairs are collected.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, Sequence

from ..ops import creation, math as _math
from .framework import CONTROL_FLOW_OPS, Block, Operator, Variable, program_guard, unique_name, var_names

__all__ = ["append_backward", "gradients"]

GRAD_SUFFIX = "@GRAD"


class _GradContext:
    """What a gradient rule reads from its `ctx` (as autograd's Node), holding Variables."""

    __slots__ = ("op", "attrs", "inputs", "outputs", "edges")

    def __init__(self, op, attrs: dict, inputs: tuple, outputs: tuple, edges: tuple):
        self.op = op
        self.attrs = attrs
        self.inputs = inputs
        self.outputs = outputs
        self.edges = edges

    @property
    def needs_input_grad(self) -> tuple[bool, ...]:
        return tuple(e is not None for e in self.edges)


def _names(items: Any, api: str, arg: str) -> set[str]:
    """Var names from a set/list of Variables or names (None: empty)."""
    return set(var_names(items, api, arg))


def _as_var_list(items: Any, api: str, arg: str) -> list[Variable]:
    seq = [items] if isinstance(items, Variable) else list(items)
    for i, v in enumerate(seq):
        if not isinstance(v, Variable):
            raise TypeError(f"{api}: {arg}[{i}] must be a static Variable, got {type(v).__name__}")
    return seq


class _Backward:
    """One backward construction over `block` (the forward ops are those present at the start)."""

    def __init__(self, block: Block, targets: list[Variable], no_grad: set[str],
                 requested: set[str] | None):
        self.block = block
        self.forward_ops: list[Operator] = list(block.ops)
        self.first_grad_op = len(block.ops)
        self.first_new_block = len(block.program.blocks)   # sub-blocks of the grad ops come after
        self.vars_before = set(block.vars)
        self.partials: dict[str, list[Variable]] = {}
        self.grads: dict[str, Variable] = {}
        self.renames: dict[str, str] = {}
        self.taken: set[str] = set()
        self.claimed: set[str] = set()
        end = self._end_of(targets)
        self.path = self._op_path(targets, end)
        self.needs = self._needs_grad(end, no_grad, requested)

    # ------------------------------------------------------------- analysis
    def _end_of(self, targets: list[Variable]) -> int:
        """One past the last forward op writing a target (ops after it cannot matter)."""
        names = {t.name for t in targets}
        end = 0
        for i, op in enumerate(self.forward_ops):
            if names.intersection(op.outputs):
                end = i + 1
        return end

    def _op_path(self, targets: list[Variable], end: int) -> list[int]:
        """Indices (last first) of the ops before `end` whose outputs reach a target."""
        relevant = {t.name for t in targets}
        path = []
        written: dict[str, int] = {}
        for i in range(end - 1, -1, -1):
            op = self.forward_ops[i]
            hit = relevant.intersection(op.outputs)
            if not hit:
                continue
            for name in hit:
                if name in written:
                    raise NotImplementedError(
                        f"append_backward: var '{name}' is written by ops #{i} ({op.type}) and "
                        f"#{written[name]} ({self.forward_ops[written[name]].type}) on the path to the "
                        "loss; in-place rewrites of a var are not differentiable in static mode")
                written[name] = i
            opdef = op.opdef
            if (op.type in CONTROL_FLOW_OPS and opdef.grad is None
                    and not all(self.block.var(n).stop_gradient for n in op.input_arg_names)):
                why = ("gradients of a while_loop's gradient are not built" if op.type == "while_grad" else
                       "its sub-block draws random numbers (recomputing it for the gradient would draw others)")
                raise NotImplementedError(
                    f"append_backward: op #{i} ({op.type}, built at {op.callsite}) lies on the path to the loss "
                    f"and reads vars that need gradients, but {why}; compute the differentiable part outside it")
            if opdef.grad is not None:
                path.append(i)
                relevant.update(op.input_arg_names)
        return path

    def _needs_grad(self, end: int, no_grad: set[str], requested: set[str] | None) -> set[str]:
        """Names of the vars that need a gradient (see the module docstring)."""
        ops = self.forward_ops[:end]
        produced = {name for op in ops for name in op.outputs}
        needs = {v.name for v in self.block.program.list_vars()
                 if v.name not in produced and v.name not in no_grad
                 and (not v.stop_gradient if requested is None else v.name in requested)}
        for op in ops:
            opdef = op.opdef
            live = opdef.grad is not None and any(n in needs for n in op.input_arg_names)
            for k, name in enumerate(op.outputs):
                var = self.block.var(name)
                if (live and k not in opdef.nondiff_outputs and var._np_dtype.kind in "fc"
                        and not var.stop_gradient and name not in no_grad) \
                        or (requested is not None and name in requested):
                    needs.add(name)
        return needs

    # ------------------------------------------------------------- emission
    def _grad_name(self, name: str) -> str:
        """`<name>@GRAD`, or `<name>@GRAD_<n>` when an earlier backward took that name."""
        target = name + GRAD_SUFFIX
        while target in self.block.vars or target in self.taken:
            target = unique_name(name + GRAD_SUFFIX)
        self.taken.add(target)
        return target

    def _finalize(self, name: str) -> Variable:
        """The summed gradient of var `name`, named `<name>@GRAD`."""
        parts = self.partials.pop(name)
        g = parts[0] if len(parts) == 1 else _math.add_n(parts)
        if g.name in self.block.vars and g.name not in self.vars_before and g.name not in self.claimed:
            self.claimed.add(g.name)
        else:
            g = creation.assign(g)
            self.claimed.add(g.name)
        self.renames[g.name] = self._grad_name(name)
        self.grads[name] = g
        return g

    def seed(self, target: Variable, grad: Variable | None) -> None:
        if grad is None:
            if -1 in target._shape:
                grad = creation.full_like(target, 1.0)
            else:
                grad = creation.full(list(target._shape), 1.0, dtype=target.dtype)
        self.partials.setdefault(target.name, []).append(grad)

    def run(self, callbacks: Sequence[Callable] | None) -> None:
        block = self.block
        for i in self.path:
            op = self.forward_ops[i]
            if not any(name in self.partials for name in op.outputs):
                continue
            inputs = tuple(None if n is None else block.var(n) for n in op.inputs)
            edges = tuple(v if v is not None and v.name in self.needs else None for v in inputs)
            if not any(e is not None for e in edges):
                continue
            outputs = tuple(block.var(n) for n in op.outputs)
            out_grads = [self._finalize(v.name) if v.name in self.partials else creation.zeros_like(v)
                         for v in outputs]
            opdef = op.opdef
            in_grads = opdef.grad(_GradContext(opdef, op.attrs, inputs, outputs, edges), *out_grads)
            if len(in_grads) != len(inputs):
                raise RuntimeError(f"gradient rule of op '{op.type}' returned {len(in_grads)} gradients "
                                   f"for {len(inputs)} inputs")
            for e, g in zip(edges, in_grads):
                if e is not None and g is not None:
                    self.partials.setdefault(e.name, []).append(g)
            for cb in callbacks or ():
                cb(block, {"__current_op_desc__": block.ops[-1] if block.ops else None})
        for name in list(self.partials):
            if name in self.needs:
                self._finalize(name)
        self._apply_renames()

    def _apply_renames(self) -> None:
        """Give the final gradient vars their `@GRAD` names (in the block and in the new ops)."""
        if not self.renames:
            return
        block, ren = self.block, self.renames
        sub_ops = [op for b in block.program.blocks[self.first_new_block:] for op in b.ops]
        for op in block.ops[self.first_grad_op:] + sub_ops:   # a grad cond's branches read them too
            op.inputs = [ren.get(n, n) if n is not None else None for n in op.inputs]
            op.outputs = [ren.get(n, n) for n in op.outputs]
            for key in ("true_outs", "false_outs"):
                if key in op.attrs:
                    op.attrs[key] = [ren.get(n, n) for n in op.attrs[key]]
        new_vars = {}
        for name, var in block.vars.items():
            if name in ren:
                var._name = ren[name]
            new_vars[var.name] = var
        block.vars = new_vars
        block.program._changed()


def _check_targets(api: str, targets: list[Variable]) -> Block:
    block = targets[0].block
    for t in targets:
        if t.block is not block:
            raise ValueError(f"{api}: all targets must belong to the same block; '{t.name}' does not")
        if t._np_dtype.kind not in "fc":
            raise TypeError(f"{api}: target '{t.name}' has dtype {t._np_dtype.name}; a gradient needs a "
                            "floating target")
    return block


def append_backward(loss: Variable, parameter_list: Iterable | None = None, no_grad_set: Any = None,
                    callbacks: Sequence[Callable] | None = None) -> list[tuple[Variable, Variable]]:
    """Append the gradient ops of `loss` to its program; returns [(param, param@GRAD)] by param name."""
    api = "append_backward"
    if not isinstance(loss, Variable):
        raise TypeError(f"{api}: argument 'loss' must be a static Variable, got {type(loss).__name__}")
    block = _check_targets(api, [loss])
    if loss.stop_gradient:
        raise ValueError(f"{api}: loss '{loss.name}' has stop_gradient=True, so nothing depends on a "
                         "trainable parameter or an input with stop_gradient=False")
    if callbacks is not None and not all(callable(cb) for cb in callbacks):
        raise TypeError(f"{api}: 'callbacks' must be a list of callables")
    program = block.program
    if parameter_list is None:
        params = [p for p in program.global_block().all_parameters() if p.trainable]
    else:
        wanted = _names(parameter_list, api, "parameter_list")
        params = [program.global_block().var(n) for n in sorted(wanted)]
    with program_guard(program):
        bw = _Backward(block, [loss], _names(no_grad_set, api, "no_grad_set"), None)
        bw.seed(loss, None)
        bw.run(callbacks)
    pairs = [(p, bw.grads[p.name]) for p in params if p.name in bw.grads]
    return sorted(pairs, key=lambda pg: pg[0].name)


def gradients(targets: Any, inputs: Any, target_gradients: Any = None,
              no_grad_set: Any = None) -> list[Variable | None]:
    """Append the ops computing d(sum of targets)/d(inputs); returns one grad var (or None) per input."""
    api = "gradients"
    targets = _as_var_list(targets, api, "targets")
    inputs = _as_var_list(inputs, api, "inputs")
    if not targets:
        raise ValueError(f"{api}: 'targets' must not be empty")
    if target_gradients is None:
        target_gradients = [None] * len(targets)
    else:
        target_gradients = [target_gradients] if isinstance(target_gradients, Variable) else list(target_gradients)
        if len(target_gradients) != len(targets):
            raise ValueError(f"{api}: got {len(target_gradients)} target_gradients for {len(targets)} targets")
        for i, (t, g) in enumerate(zip(targets, target_gradients)):
            if g is not None and (not isinstance(g, Variable) or g.shape != t.shape):
                raise ValueError(f"{api}: target_gradients[{i}] must be None or a Variable of shape "
                                 f"{t.shape} (the shape of '{t.name}')")
    for i, x in enumerate(inputs):
        if x.stop_gradient:
            raise ValueError(f"{api}: inputs[{i}] ('{x.name}') has stop_gradient=True; set "
                             f"{x.name}.stop_gradient = False before building the ops that use it")
    block = _check_targets(api, targets)
    with program_guard(block.program):
        bw = _Backward(block, targets, _names(no_grad_set, api, "no_grad_set"), {x.name for x in inputs})
        for t, g in zip(targets, target_gradients):
            bw.seed(t, g)
        bw.run(None)
    return [bw.grads.get(x.name) for x in inputs]
