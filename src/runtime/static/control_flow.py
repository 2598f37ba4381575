"""Control flow in programs: `cond` and `while_loop` (Paddle's `static.nn.cond` / `while_loop`).

In dynamic mode they are Python's `if` and `while` over the predicate's value. In static mode
each function is built ONCE into a sub-block of the current block (block.parent_idx points back),
and one op in the current block stands for the whole construct (as Paddle's
control-flow ops, which run through OperatorBase):

- `cond`: inputs [pred, *captured], outputs the merged results; attrs `true_block`,
  `false_block` (sub-block indices) and `true_outs` / `false_outs` (what each branch returns);
- `while`: inputs [pred, *loop_vars, *captured], outputs the final loop vars; attrs
  `sub_block`, `loop_vars` (the block's placeholders of the loop vars), `body_outs` and
  `next_cond` (the body's results and the condition on them, both built in the block);
- `while_grad` (made by the backward, `_while_grad`): inputs [pred, *loop_vars, *captured,
  *d(results)], outputs the gradients of the float loop vars and of the captured vars that need
  one; attrs those of its `while` plus `grad_block` (the body again with its gradient ops).

`captured` are the vars a sub-block reads from its ancestors (parameters included): naming them
as inputs lets the dependency analysis, the GC and the passes of the enclosing block see every
value the construct needs; the executor hands them to the sub-block's own InterpreterCore as its
feeds. A sub-block never writes a var of an enclosing block (it returns new values instead), so a
construct is one op with plain inputs and outputs. Building a construct either completes or
leaves the program as it was. `case` and `switch_case` are nested conds. Gradients: `_cond_grad`
and `_while_grad` (both recompute the construct's forward).
"""
from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator

import numpy as np

from .. import mode as _mode
from ..ops.creation import zeros_like
from ..ops.registry import OpDef
from ..tensor import Tensor
from .backward import _Backward
from .builder import _as_var
from .framework import Block, Operator, Program, Variable, default_main_program, unique_name

__all__ = ["cond", "case", "switch_case", "while_loop", "sub_block_indices", "external_reads", "sub_program", "control_flow_def"]


# ---------------------------------------------------------------- the public API
def cond(pred: Any, true_fn: Callable[[], Any] | None = None, false_fn: Callable[[], Any] | None = None,
         name: str | None = None, return_names: Any = None) -> Any:
    """`true_fn()` if `pred` (a one-element bool tensor) holds, else `false_fn()`. In a static
    program both branches are built and the choice is made at run time: they must return the same
    structure of tensors (lists, tuples, dicts, None) with the same dtypes; a dimension in which
    they differ becomes -1."""
    for arg, fn in (("true_fn", true_fn), ("false_fn", false_fn)):
        if fn is not None and not callable(fn):
            raise TypeError(f"cond: argument '{arg}' must be callable or None, got {type(fn).__name__}")
    if _mode.in_dynamic_mode():
        fn = true_fn if _truth(pred, "cond", "pred") else false_fn
        return None if fn is None else fn()
    _check_pred(pred, "cond", "pred")
    program = default_main_program()
    parent = program.current_block()
    prefix = name or unique_name("cond")
    with _all_or_nothing(program):
        t_block, t_leaves, t_tree = _build_branch(program, true_fn, "cond", "true_fn")
        f_block, f_leaves, f_tree = _build_branch(program, false_fn, "cond", "false_fn")
        if t_tree != f_tree:
            raise ValueError(f"cond: true_fn and false_fn must return the same structure, got {t_tree} "
                             f"and {f_tree}")
        outs = []
        for k, (t, f) in enumerate(zip(t_leaves, f_leaves)):
            if (t is None) != (f is None):
                raise ValueError(f"cond: output #{k} is None in one branch only")
            if t is None:
                continue
            if t._np_dtype != f._np_dtype:
                raise TypeError(f"cond: output #{k} has dtype {t._np_dtype.name} in true_fn but "
                                f"{f._np_dtype.name} in false_fn")
            if len(t._shape) != len(f._shape):
                raise ValueError(f"cond: output #{k} has shape {t.shape} in true_fn but {f.shape} in false_fn")
            shape = [a if a == b else -1 for a, b in zip(t._shape, f._shape)]
            outs.append(parent.create_var(f"{prefix}.out_{len(outs)}", shape, t._np_dtype,
                                          stop_gradient=t.stop_gradient and f.stop_gradient))
        t_names = [v.name for v in t_leaves if v is not None]
        f_names = [v.name for v in f_leaves if v is not None]
        captured = list(dict.fromkeys([*external_reads(t_block, t_names), *external_reads(f_block, f_names)]))
        parent.append_op("cond", [pred.name, *captured], [o.name for o in outs],
                         {"true_block": t_block.idx, "false_block": f_block.idx, "true_outs": t_names,
                          "false_outs": f_names})
    merged = iter(outs)
    return _unflatten(t_tree, [None if t is None else next(merged) for t in t_leaves])


def case(pred_fn_pairs: Any, default: Callable[[], Any] | None = None, name: str | None = None) -> Any:
    """The result of the first `fn` whose `pred` holds, else of `default` (None: the last pair's
    fn, as Paddle's). Built as nested conds, so in a static program every fn is built once."""
    if not isinstance(pred_fn_pairs, (list, tuple)) or not pred_fn_pairs:
        raise TypeError(f"case: argument 'pred_fn_pairs' must be a non-empty list or tuple of (pred, fn) pairs, "
                        f"got {pred_fn_pairs!r}")
    for k, pair in enumerate(pred_fn_pairs):
        if not isinstance(pair, (list, tuple)) or len(pair) != 2 or not callable(pair[1]):
            raise TypeError(f"case: pred_fn_pairs[{k}] must be a (pred, callable) pair, got {pair!r}")
    if default is not None and not callable(default):
        raise TypeError(f"case: argument 'default' must be callable or None, got {type(default).__name__}")
    pairs = list(pred_fn_pairs)
    if default is None:
        *pairs, (_, default) = pairs
    with _atomic():
        return _first_that_holds(pairs, default)


def switch_case(branch_index: Any, branch_fns: Any, default: Callable[[], Any] | None = None,
                name: str | None = None) -> Any:
    """The result of the fn keyed by `branch_index` (a one-element int tensor), else of `default`
    (None: the fn of the largest key, as Paddle's). `branch_fns`: a dict or (key, fn) pairs of int
    keys, or a list of fns keyed by position."""
    if isinstance(branch_fns, dict):
        items = list(branch_fns.items())
    elif isinstance(branch_fns, (list, tuple)) and branch_fns and all(callable(f) for f in branch_fns):
        items = list(enumerate(branch_fns))
    elif isinstance(branch_fns, (list, tuple)) and branch_fns:
        items = list(branch_fns)
    else:
        raise TypeError(f"switch_case: argument 'branch_fns' must be a non-empty dict, list of callables or list "
                        f"of (int, callable) pairs, got {branch_fns!r}")
    for k, item in enumerate(items):
        if (not isinstance(item, (list, tuple)) or len(item) != 2 or isinstance(item[0], bool)
                or not isinstance(item[0], (int, np.integer)) or not callable(item[1])):
            raise TypeError(f"switch_case: branch_fns[{k}] must be an (int, callable) pair, got {item!r}")
    keys = [int(key) for key, _ in items]
    if len(set(keys)) != len(keys):
        raise ValueError(f"switch_case: the keys of argument 'branch_fns' must be unique, got {keys}")
    if default is not None and not callable(default):
        raise TypeError(f"switch_case: argument 'default' must be callable or None, got {type(default).__name__}")
    if not isinstance(branch_index, Tensor) or branch_index.dtype.np_dtype.kind not in "iu":
        raise TypeError(f"switch_case: argument 'branch_index' must be an int Tensor, got {branch_index!r}")
    items.sort(key=lambda item: int(item[0]))
    if default is None:
        *items, (_, default) = items
    with _atomic():
        return _first_that_holds([(branch_index == int(key), fn) for key, fn in items], default)


def _atomic() -> contextlib.AbstractContextManager:
    """In static mode: what a failing construct built is taken back (see `_all_or_nothing`)."""
    return contextlib.nullcontext() if _mode.in_dynamic_mode() else _all_or_nothing(default_main_program())


def _first_that_holds(pairs: list, default: Callable[[], Any]) -> Any:
    """cond(p0, f0, lambda: cond(p1, f1, ... default)): each fn built once, in its own branch."""
    if not pairs:
        return default()
    (pred, fn), rest = pairs[0], pairs[1:]
    return cond(pred, fn, lambda: _first_that_holds(rest, default))


def while_loop(cond: Callable[..., Any], body: Callable[..., Any], loop_vars: Any, is_test: bool = False,
               name: str | None = None) -> list:
    """Repeat `loop_vars = body(*loop_vars)` while `cond(*loop_vars)` (a one-element bool tensor)
    holds; the final loop vars, as a list. In a static program the body is built once; its
    results must keep each loop var's dtype and shape."""
    if not callable(cond):
        raise TypeError(f"while_loop: argument 'cond' must be callable, got {type(cond).__name__}")
    if not callable(body):
        raise TypeError(f"while_loop: argument 'body' must be callable, got {type(body).__name__}")
    if not isinstance(loop_vars, (list, tuple)) or not loop_vars:
        raise ValueError(f"while_loop: argument 'loop_vars' must be a non-empty list or tuple, got {loop_vars!r}")
    for k, v in enumerate(loop_vars):
        if not isinstance(v, Tensor):
            raise TypeError(f"while_loop: loop_vars[{k}] must be a Tensor, got {type(v).__name__}")
    if _mode.in_dynamic_mode():
        values = list(loop_vars)
        while _truth(cond(*values), "while_loop", "cond"):
            values = _body_results(body(*values), len(values))
        return values
    program = default_main_program()
    parent = program.current_block()
    prefix = name or unique_name("while_loop")
    with _all_or_nothing(program):
        inits = [_as_var(v) for v in loop_vars]
        pred = cond(*inits)
        _check_pred(pred, "while_loop", "cond")
        block = _new_block(program)
        with _in_block(program, block):
            # a float loop var may carry a gradient from the second trip on, whatever its initial
            # value's flag: the body is built once, for every trip
            holders = [block.create_var(f"{prefix}.loop_var_{k}", v._shape, v._np_dtype,
                                        stop_gradient=v._np_dtype.kind not in "fc") for k, v in enumerate(inits)]
            outs = [_as_var(o) for o in _body_results(body(*holders), len(holders))]
            for k, (o, v) in enumerate(zip(outs, inits)):
                if o._np_dtype != v._np_dtype:
                    raise TypeError(f"while_loop: body result #{k} has dtype {o._np_dtype.name} but loop_vars[{k}] "
                                    f"has dtype {v._np_dtype.name}")
                if len(o._shape) != len(v._shape) or any(a != b and a != -1 and b != -1
                                                         for a, b in zip(o._shape, v._shape)):
                    raise ValueError(f"while_loop: body result #{k} has shape {o.shape} but loop_vars[{k}] has "
                                     f"shape {v.shape}")
            next_pred = cond(*outs)
            _check_pred(next_pred, "while_loop", "cond")
        _check_no_outer_writes(block, "while_loop", "body")
        out_names = [o.name for o in outs]
        captured = external_reads(block, [*out_names, next_pred.name])
        constant = all(parent.var(n).stop_gradient for n in [*(v.name for v in inits), *captured])
        finals = [parent.create_var(f"{prefix}.out_{k}", v._shape, v._np_dtype,
                                    stop_gradient=constant or v._np_dtype.kind not in "fc")
                  for k, v in enumerate(inits)]
        parent.append_op("while", [pred.name, *(v.name for v in inits), *captured], [f.name for f in finals],
                         {"sub_block": block.idx, "loop_vars": [h.name for h in holders], "body_outs": out_names,
                          "next_cond": next_pred.name})
    return finals


# ---------------------------------------------------------------- checks and building
def _truth(pred: Any, api: str, arg: str) -> bool:
    """The value of an eager predicate: a one-element bool tensor (or a Python bool)."""
    if isinstance(pred, (bool, np.bool_)):
        return bool(pred)
    if not isinstance(pred, Tensor):
        raise TypeError(f"{api}: argument '{arg}' must be a bool Tensor, got {type(pred).__name__}")
    value = pred.numpy()
    if value.dtype != np.bool_ or value.size != 1:
        raise ValueError(f"{api}: argument '{arg}' must be a bool Tensor with one element, got dtype "
                         f"{value.dtype.name} and shape {list(value.shape)}")
    return bool(value.reshape(()))


def _check_pred(pred: Any, api: str, arg: str) -> None:
    if not isinstance(pred, Variable):
        raise TypeError(f"{api}: argument '{arg}' must give a bool Variable in static mode, got {type(pred).__name__}")
    if pred._np_dtype != np.bool_ or pred.size not in (1, -1) or len(pred._shape) > 1:
        raise ValueError(f"{api}: argument '{arg}' must give a bool Variable with one element, got dtype "
                         f"{pred._np_dtype.name} and shape {pred.shape}")


def _body_results(result: Any, n: int) -> list:
    out = list(result) if isinstance(result, (list, tuple)) else [result]
    if len(out) != n:
        raise ValueError(f"while_loop: body must return as many values as loop_vars ({n}), got {len(out)}")
    for k, v in enumerate(out):
        if not isinstance(v, Tensor):
            raise TypeError(f"while_loop: body result #{k} must be a Tensor, got {type(v).__name__}")
    return out


def _new_block(program: Program) -> Block:
    block = Block(program, len(program.blocks), program._current_block_idx)
    program.blocks.append(block)
    program._changed()
    return block


@contextlib.contextmanager
def _in_block(program: Program, block: Block) -> Iterator[None]:
    """Ops built inside go to `block` (Paddle's BlockGuard)."""
    prev = program._current_block_idx
    program._current_block_idx = block.idx
    try:
        yield
    finally:
        program._current_block_idx = prev


@contextlib.contextmanager
def _all_or_nothing(program: Program) -> Iterator[None]:
    """On an error, drop the blocks, ops and vars the construct had added (bad input changes nothing)."""
    parent = program.current_block()
    n_blocks, n_ops, names = len(program.blocks), len(parent.ops), set(parent.vars)
    try:
        yield
    except BaseException:
        del program.blocks[n_blocks:]
        del parent.ops[n_ops:]
        for name in [n for n in parent.vars if n not in names]:
            del parent.vars[name]
        program._changed()
        raise


def _build_branch(program: Program, fn: Callable[[], Any] | None, api: str,
                  arg: str) -> tuple[Block, list[Variable | None], Any]:
    """A sub-block holding what `fn()` builds; its results as flat vars and their structure."""
    block = _new_block(program)
    with _in_block(program, block):
        result = None if fn is None else fn()
        leaves, tree = _flatten(result, api, arg)
        leaves = [None if v is None else _as_var(v) for v in leaves]
    _check_no_outer_writes(block, api, arg)
    return block, leaves, tree


def _flatten(value: Any, api: str, arg: str) -> tuple[list, Any]:
    """Leaves (tensors or None) and a structure to compare and rebuild from."""
    if value is None or isinstance(value, Tensor):
        return [value], ("leaf",)
    if isinstance(value, (list, tuple)):
        leaves, trees = [], []
        for item in value:
            sub, tree = _flatten(item, api, arg)
            leaves += sub
            trees.append(tree)
        return leaves, (type(value).__name__, tuple(trees))
    if isinstance(value, dict):
        leaves, trees = [], []
        for key in value:
            sub, tree = _flatten(value[key], api, arg)
            leaves += sub
            trees.append((key, tree))
        return leaves, ("dict", tuple(trees))
    raise TypeError(f"{api}: {arg} must return Tensors (in lists, tuples or dicts) or None, "
                    f"got {type(value).__name__}")


def _unflatten(tree: Any, leaves: list) -> Any:
    it = iter(leaves)

    def build(t: Any) -> Any:
        if t[0] == "leaf":
            return next(it)
        if t[0] == "dict":
            return {k: build(sub) for k, sub in t[1]}
        items = [build(sub) for sub in t[1]]
        return items if t[0] == "list" else tuple(items)
    return build(tree)


def _check_no_outer_writes(block: Block, api: str, arg: str) -> None:
    for op in block.ops:
        for n in sorted(op.written()):
            if n not in block.vars:
                raise ValueError(f"{api}: {arg} writes variable '{n}' (op '{op.type}' built at {op.callsite}), "
                                 f"which is defined outside it; return the new value instead")


# ---------------------------------------------------------------- what the executor and passes ask
def sub_block_indices(op: Operator) -> tuple[int, ...]:
    """The sub-blocks a control-flow op runs."""
    if op.type == "cond":
        return (op.attrs["true_block"], op.attrs["false_block"])
    if op.type == "while":
        return (op.attrs["sub_block"],)
    if op.type == "while_grad":
        return (op.attrs["sub_block"], op.attrs["grad_block"])
    return ()


def external_reads(block: Block, results: list[str] = ()) -> list[str]:
    """Names `block`'s ops (or its `results`) read that are defined in an enclosing block, in
    order of first use (a nested construct's inputs already list what its own blocks read)."""
    names = [n for op in block.ops for n in op.input_arg_names] + list(results)
    return [n for n in dict.fromkeys(names) if n not in block.vars]


def sub_program(program: Program, index: int, fed: list[str]) -> Program:
    """A program whose global block runs block `index`: the `fed` vars it reads from outside as
    plain vars, then its own vars and ops. The other blocks stay at their indices (a construct
    nested in this block refers to its sub-blocks by index)."""
    new = program.clone()
    src = new.blocks[index]
    root = Block(new, 0)
    for name in [*fed, *src.vars]:
        v = src.var(name)
        root.vars[name] = Variable(root, name, v._shape, v._np_dtype, stop_gradient=v.stop_gradient)
    root.ops = [Operator(root, op.type, op.inputs, op.outputs, op.attrs, op.callsite) for op in src.ops]
    new.blocks[0] = root
    new._changed()
    return new


def _effects(program: Program, op: Operator) -> tuple[bool, bool]:
    """(random, side_effect) of any op in the sub-blocks of `op`, nested ones included."""
    random = side = False
    for idx in sub_block_indices(op):
        for inner in program.blocks[idx].ops:
            d = inner.opdef
            random, side = random or d.random, side or d.side_effect
    return random, side


def _not_a_kernel(*args: Any) -> Any:
    raise TypeError("a control-flow op runs inside an InterpreterCore (static.Executor), not as a kernel")


def control_flow_def(op: Operator) -> OpDef:
    """What the passes and the backward read of a control-flow op, as of a registry op: no
    kernel; random / side effects as its sub-blocks have them; a gradient rule for a cond or a
    while whose sub-blocks draw no random numbers (the rules recompute them, which must draw the
    same numbers again)."""
    random, side = _effects(op.block.program, op)
    grad = None if random else {"cond": _cond_grad, "while": _while_grad}.get(op.type)
    return OpDef(name=op.type, kernel=_not_a_kernel, meta=_not_a_kernel, grad=grad, inputs=("*inputs",),
                 random=random, side_effect=side)


# ---------------------------------------------------------------- gradients
def _cond_grad(ctx: Any, *out_grads: Variable) -> tuple:
    """The gradient of a cond is a cond of gradients: on the predicate, the branch that ran is
    built again (its ops copied into the grad branch's own block: the forward branch's values live
    only inside its run) and differentiated with respect to the captured vars that need gradients;
    a var the other branch reads gets zeros there."""
    pred, *captured = ctx.inputs
    program = pred.block.program
    wanted = [k for k, edge in enumerate(ctx.edges[1:]) if edge is not None]
    targets = [captured[k] for k in wanted]

    def branch(index: int, results: list[str]) -> Callable[[], list]:
        return lambda: _branch_grads(program, index, results, out_grads, targets)
    grads = cond(pred, branch(ctx.attrs["true_block"], ctx.attrs["true_outs"]),
                 branch(ctx.attrs["false_block"], ctx.attrs["false_outs"]))
    in_grads: list[Variable | None] = [None] * len(ctx.inputs)
    for k, g in zip(wanted, grads):
        in_grads[1 + k] = g
    return tuple(in_grads)


def _branch_grads(program: Program, index: int, results: list[str], out_grads: Any,
                  targets: list[Variable]) -> list[Variable]:
    """In the current (new) block: block `index`'s vars and ops again, then the gradients of its
    `results`, seeded with `out_grads`, with respect to `targets` (zeros where none flows)."""
    block, src = program.current_block(), program.blocks[index]
    for name, v in src.vars.items():   # the same names: sibling blocks do not see each other's vars
        block.create_var(name, v._shape, v._np_dtype, stop_gradient=v.stop_gradient)
    for op in src.ops:
        block.append_op(op.type, op.inputs, op.outputs, op.attrs, op.callsite)
    outs = [block.var(n) for n in results]
    bw = _Backward(block, [o for o in outs if o.block is block] or outs, set(), {t.name for t in targets})
    for o, g in zip(outs, out_grads):
        bw.seed(o, g)
    bw.run(None)
    return [bw.grads[t.name] if t.name in bw.grads else zeros_like(t) for t in targets]


def _while_grad(ctx: Any, *out_grads: Variable) -> tuple:
    """The gradient of a while_loop: a `while_grad` op that runs the loop again from its initial
    values (keeping each trip's loop vars), then walks the trips backwards through a grad block
    (the body's ops again and their gradient ops: d(loop vars) of the trip before, and the trip's
    share of d(captured), summed over the trips). Float loop vars carry gradients."""
    pred, rest = ctx.inputs[0], ctx.inputs[1:]
    attrs = ctx.attrs
    n = len(attrs["loop_vars"])
    inits, captured = rest[:n], rest[n:]
    program = pred.block.program
    parent = program.current_block()
    diff = [k for k, v in enumerate(inits) if v._np_dtype.kind in "fc"]
    wanted = [k for k, edge in enumerate(ctx.edges[1 + n:]) if edge is not None]
    grad_block = _new_block(program)
    with _in_block(program, grad_block):
        d_next = [grad_block.create_var(f"{attrs['loop_vars'][k]}@GRAD_NEXT", inits[k]._shape, inits[k]._np_dtype)
                  for k in diff]
        targets = [program.blocks[attrs["sub_block"]].vars[attrs["loop_vars"][k]] for k in diff]
        grads = _branch_grads(program, attrs["sub_block"], [attrs["body_outs"][k] for k in diff], d_next,
                              [*targets, *(captured[k] for k in wanted)])
    prefix = unique_name("while_grad")
    d_inits = [parent.create_var(f"{prefix}.d_loop_var_{k}", inits[k]._shape, inits[k]._np_dtype) for k in diff]
    d_captured = [parent.create_var(f"{prefix}.d_captured_{k}", captured[k]._shape, captured[k]._np_dtype)
                  for k in wanted]
    parent.append_op("while_grad", [pred.name, *(v.name for v in inits), *(c.name for c in captured),
                                    *(out_grads[k].name for k in diff)], [v.name for v in (*d_inits, *d_captured)],
                     {**{key: attrs[key] for key in ("sub_block", "loop_vars", "body_outs", "next_cond")},
                      "grad_block": grad_block.idx, "diff": diff, "wanted": wanted,
                      "d_next": [v.name for v in d_next], "grads": [g.name for g in grads]})
    in_grads: list[Variable | None] = [None] * len(ctx.inputs)
    for k, g in zip(diff, d_inits):
        if ctx.edges[1 + k] is not None:
            in_grads[1 + k] = g
    for k, g in zip(wanted, d_captured):
        in_grads[1 + n + k] = g
    return tuple(in_grads)
