"""Program passes run before the InterpreterCore builds its plan.

`apply_passes(program, protected)` clones `program` (the user's Program is never changed) and
runs on the copy's global block, each behind a flag of `runtime.flags`:

0. constant folding (`FLAGS_enable_constant_folding`): an op of `_FOLDABLE` (arithmetic, sqrt,
   comparisons, casts, data movement: results IEEE 754 fixes to the bit on every array module)
   whose inputs are all constants (outputs of pure ops with no input, `assign_value` and `full`,
   or of ops folded before it) is evaluated once now with its own kernel, so the value is the
   bits a run would compute, and becomes an `assign_value` op of that value. Only whole constant
   subexpressions fold: arithmetic is never reassociated, so `(x * 2) * 3` keeps both multiplies. An op stays as it is when a var it reads
   or writes holds more than `_FOLD_LIMIT` elements or has a dim unknown before the run, when it
   writes a protected, persistable or sub-block var, a var written more than once, or when its
   kernel raises or warns (a division by zero: the run warns or raises as the program says).
1. dead-op elimination (`FLAGS_enable_dead_op_elimination`): walking backwards from the
   `protected` names (feeds, fetches, persistables), drop every op none of whose outputs is
   needed. Ops that are flagged `side_effect`, `inplace` or `random` (a random op advances the
   generator, so dropping it would change the numbers of later random ops) or that write a
   persistable var are always kept. Vars no op names any more are removed.
2. elementwise-chain fusion (`FLAGS_enable_fusion`): a maximal group of ops from
   `runtime.ops.fused.ELEMENTWISE` linked by intermediates that are written once, read by
   exactly one op of the group, and neither protected nor persistable becomes ONE
   `fused_elementwise` op at the position of the group's last op (moving a member's read of an
   outside var there is allowed only when no op in between writes that var). A constant the
   group reads (a var written once by a constant op with no input, neither protected nor
   persistable) becomes a step of the chain instead of an input, and dead-op elimination then
   drops its op when nothing else reads it. The fused op has
   no gradient rule: passes run only on the copy the executor makes of a program whose
   backward ops append_backward/minimize have already added.
3. in-place marks (`FLAGS_enable_inplace`): `new_program._inplace_pairs` is a dict
   `{op index in the global block: (input slot, output slot)}`. An executor may then run that
   op as `runtime.ops.fused.inplace_kernel(op.type)(xp, arrays[input_slot], *arrays, **op.attrs)`
   and store the result as output `output_slot`: the result is written into the input's
   buffer where shape and dtype allow at run time, and is bit-identical to the plain kernel's
   either way. A pair is recorded only when the op has an `out=` form, the input var has the
   output's shape and dtype, is not protected (so a caller's feed array is never written) nor
   persistable, is written exactly once, by an op known to return a fresh buffer, is read by no
   later op, and is read earlier only by ops that return fresh buffers (no view of it lives on).

Between 2 and 3, `runtime.static.epilogue.apply_epilogue_passes` (behind its own flags) runs a
conv and the eval batch norm and elementwise ops on its output as one op, and drops the argmax
of a max_pool whose mask nothing reads.
"""
from __future__ import annotations

import warnings
from collections import Counter, defaultdict
from typing import Any

import numpy as np

from ..flags import flag
from ..ops.fused import ELEMENTWISE, inplace_kernel
from ..ops.registry import get_op
from .epilogue import apply_epilogue_passes, op_uses
from .framework import CONTROL_FLOW_OPS, Block, Operator, Program

__all__ = ["apply_passes"]

# ops whose outputs never share memory with their inputs (so an output may be overwritten in place)
_FRESH_OUTPUT = ELEMENTWISE | {"fused_elementwise", "matmul", "linear", "linear_grad_input"}


def apply_passes(program: Program, protected: set[str]) -> Program:
    """A copy of `program` with dead ops dropped, elementwise chains fused and in-place pairs marked."""
    new = program.clone()
    keep = set(protected) | _names_in_sub_blocks(new)
    block = new.global_block()
    if flag("FLAGS_enable_constant_folding"):
        _fold_constants(block, keep)
    if flag("FLAGS_enable_dead_op_elimination"):
        _eliminate_dead_ops(block, keep)
    if flag("FLAGS_enable_fusion"):
        _fuse_elementwise_chains(block, keep)
        if flag("FLAGS_enable_dead_op_elimination"):
            _eliminate_dead_ops(block, keep)   # the constant ops whose values the chains took in
    apply_epilogue_passes(block, keep)
    new._inplace_pairs = _inplace_pairs(block, keep) if flag("FLAGS_enable_inplace") else {}
    new._changed()
    return new


def _names_in_sub_blocks(program: Program) -> set[str]:
    """Vars named by ops of blocks other than the global one: the passes leave them alone."""
    return {n for b in program.blocks[1:] for op in b.ops for n in (*op.input_arg_names, *op.outputs)}


# ---------------------------------------------------------------- constant folding
_FOLD_LIMIT = 64  # elements: a larger value stays an op (folded, its values would be an attribute)

# Ops whose results IEEE 754 arithmetic or plain data movement fix to the bit, so the NumPy kernel run
# by the pass gives what any executor's array module (NumPy, CuPy) computes at run time; library
# functions (exp, tanh, pow, ...) may differ by an ulp between array modules and are not folded.
_FOLDABLE = frozenset({
    "add", "subtract", "multiply", "divide", "neg", "abs", "sqrt", "square", "maximum", "minimum", "fmax", "fmin",
    "floor", "ceil", "trunc", "sign", "cast", "scale", "clip", "where", "isnan", "isinf", "isfinite",
    "equal", "not_equal", "less_than", "less_equal", "greater_than", "greater_equal",
    "logical_and", "logical_or", "logical_xor", "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor",
    "bitwise_not", "reshape", "transpose", "squeeze", "unsqueeze", "flatten", "concat", "stack", "expand",
    "expand_as", "tile", "flip", "getitem", "assign", "full_like"})


def _is_pure(op: Operator) -> bool:
    """True when the op computes the same outputs from the same inputs and does nothing else."""
    if op.type in CONTROL_FLOW_OPS:
        return False
    d = op.opdef
    return not (d.random or d.side_effect or d.inplace or d.dynamic_shape)


def _constant_makers(block: Block, keep: set[str]) -> dict[str, Operator]:
    """var -> its op, for each var of known shape written by exactly one op, a pure one with no input
    and hashable attributes, that is neither protected nor persistable: the var holds the same value
    on every run, and the op can be a step of a fused chain."""
    writes = Counter(n for op in block.ops for n in op.written())
    return {op.outputs[0]: op for op in block.ops
            if not op.inputs and len(op.outputs) == 1 and _is_pure(op) and _foldable_output(block, keep, writes, op)
            and block.var(op.outputs[0]).size >= 0 and _hashable(op.attrs)}


def _hashable(attrs: dict[str, Any]) -> bool:
    """True when the attributes can be part of a chain (whose executor cache hashes it)."""
    try:
        hash(tuple(attrs.items()))
    except TypeError:
        return False
    return True


def _foldable_output(block: Block, keep: set[str], writes: Counter, op: Operator) -> bool:
    (name,) = op.outputs
    return writes[name] == 1 and name not in keep and not block.var(name).persistable


def _evaluate(op: Operator, args: list) -> np.ndarray | None:
    """The op's kernel on `args`, or None when it raises or warns: the run then does it, as the
    program says (a warning or error at pass time would come once, and from the wrong place)."""
    try:
        with warnings.catch_warnings(), np.errstate(all="raise"):
            warnings.simplefilter("error")
            value = get_op(op.type).kernel(np, *args, **op.attrs)
    except Exception:  # noqa: BLE001 - whatever it is, the run raises it where the program says
        return None
    return None if isinstance(value, (tuple, list)) else np.array(value, copy=True)


def _fold_constants(block: Block, keep: set[str]) -> None:
    """Replace, in program order, each foldable op of constants by an assign_value of its value, so the
    ops after it that read only constants fold in turn; constants are evaluated only when an op needs them."""
    writes = Counter(n for op in block.ops for n in op.written())
    makers = _constant_makers(block, keep)
    values: dict[str, np.ndarray] = {}

    def value(name: str) -> np.ndarray | None:
        if name not in values:
            values[name] = _evaluate(makers[name], [])
        return values[name]

    for i, op in enumerate(block.ops):
        if (op.type not in _FOLDABLE or not op.input_arg_names or len(op.outputs) != 1 or not _is_pure(op)
                or not _foldable_output(block, keep, writes, op)
                or any(n not in makers for n in op.input_arg_names)
                or any(not 0 <= block.var(n).size <= _FOLD_LIMIT for n in (*op.input_arg_names, *op.outputs))):
            continue
        args = [None if n is None else value(n) for n in op.inputs]
        if any(n is not None and a is None for n, a in zip(op.inputs, args)):
            continue
        folded = _assign_value(block, op, _evaluate(op, args))
        if folded is not None:
            block.ops[i] = makers[op.outputs[0]] = folded


def _assign_value(block: Block, op: Operator, value: np.ndarray | None) -> Operator | None:
    """An assign_value op making `value` as op's output, or None when `value` is missing, is not what the
    output var declares, or does not survive the trip through the op's attribute exactly."""
    var = block.var(op.outputs[0])
    if (value is None or value.dtype != var._np_dtype or value.ndim != len(var._shape)
            or any(d != -1 and d != n for d, n in zip(var._shape, value.shape))):
        return None
    attrs = {"shape": tuple(value.shape), "dtype": value.dtype, "values": tuple(value.ravel().tolist())}
    folded = Operator(block, "assign_value", [], [var.name], attrs, op.callsite)
    made = _evaluate(folded, [])
    if made is None or made.dtype != value.dtype or made.tobytes() != value.tobytes():
        return None
    return folded


# ---------------------------------------------------------------- dead-op elimination
def _eliminate_dead_ops(block: Block, keep: set[str]) -> None:
    live = set(keep)
    kept = []
    for op in reversed(block.ops):
        d = op.opdef
        writes = op.written()
        if (d.side_effect or d.inplace or d.random or not live.isdisjoint(writes)
                or any(block.var(n).persistable for n in writes)):
            kept.append(op)
            live.update(op.input_arg_names)
    block.ops = kept[::-1]
    used = {n for op in block.ops for n in (*op.input_arg_names, *op.outputs)}
    for name in [n for n, v in block.vars.items()
                 if n not in used and n not in keep and not v.persistable and not v.need_check_feed]:
        del block.vars[name]


# ---------------------------------------------------------------- elementwise-chain fusion
def _fuse_elementwise_chains(block: Block, keep: set[str]) -> None:
    ops = block.ops
    readers, writers = op_uses(block)
    fusible = [op.type in ELEMENTWISE and len(op.outputs) == 1 and None not in op.inputs for op in ops]
    root = list(range(len(ops)))                       # op -> index of its group's last op
    members = {i: [i] for i in range(len(ops))}        # group root -> member op indices
    outside = {i: set(op.input_arg_names) for i, op in enumerate(ops)}  # group root -> vars read from outside
    for i, op in enumerate(ops):
        if not fusible[i]:
            continue
        for name in dict.fromkeys(op.input_arg_names):
            w = writers.get(name, ())
            if len(w) != 1 or readers[name] != {i} or name in keep or block.var(name).persistable:
                continue
            j = w[0]
            if j >= i or not fusible[j] or root[j] != j:
                continue
            if any(not ops[k].written().isdisjoint(outside[j]) for k in range(j + 1, i) if root[k] != i):
                continue  # an op in between writes what group j reads: its reads cannot move to op i
            for m in members[j]:
                root[m] = i
            members[i] = members.pop(j) + members[i]
            outside[i] = (outside[i] - {name}) | outside.pop(j)
    makers = _constant_makers(block, keep)
    fused = []
    for i, op in enumerate(ops):
        if root[i] != i:
            continue
        group = sorted(members[i])
        fused.append(op if len(group) == 1 else _fused_op(block, [ops[m] for m in group], makers))
    block.ops = fused


def _fused_op(block: Block, group: list[Operator], makers: dict[str, Operator]) -> Operator:
    """One fused_elementwise op for `group` (ops in program order, the last one's output kept); the
    constants the group reads (`makers`) become its first steps, one per distinct constant op."""
    made = {op.outputs[0] for op in group}
    outside = [n for op in group for n in op.inputs if n not in made]
    const_key = {n: (makers[n].type, tuple(sorted(makers[n].attrs.items()))) for n in outside if n in makers}
    consts = list(dict.fromkeys(const_key.values()))
    inputs = list(dict.fromkeys(n for n in outside if n not in const_key))
    ref = {n: len(inputs) + consts.index(key) for n, key in const_key.items()}
    ref.update({n: s for s, n in enumerate(inputs)})
    ref.update({op.outputs[0]: len(inputs) + len(consts) + k for k, op in enumerate(group)})
    chain = (*((name, (), attrs) for name, attrs in consts),
             *((op.type, tuple(ref[n] for n in op.inputs), tuple(sorted(op.attrs.items()))) for op in group))
    for op in group[:-1]:
        del block.vars[op.outputs[0]]
    last = group[-1]
    return Operator(block, "fused_elementwise", inputs, [last.outputs[0]], {"chain": chain}, last.callsite)


# ---------------------------------------------------------------- in-place marks
def _inplace_pairs(block: Block, keep: set[str]) -> dict[int, tuple[int, int]]:
    ops = block.ops
    readers: dict[str, list[int]] = defaultdict(list)
    writers: dict[str, list[int]] = defaultdict(list)
    last_use: dict[str, int] = {}
    for i, op in enumerate(ops):
        for n in op.input_arg_names:
            readers[n].append(i)
            last_use[n] = i
        for n in op.written():
            writers[n].append(i)
            last_use[n] = i
    pairs = {}
    for i, op in enumerate(ops):
        if inplace_kernel(op.type) is None or len(op.outputs) != 1:
            continue
        out = block.var(op.outputs[0])
        for slot, name in enumerate(op.inputs):
            if name is None or name in keep or name == out.name or last_use[name] != i:
                continue
            var = block.var(name)
            w = writers[name]
            if (var.persistable or var._shape != out._shape or var._np_dtype != out._np_dtype
                    or len(w) != 1 or w[0] >= i or ops[w[0]].type not in _FRESH_OUTPUT
                    or any(ops[k].type not in _FRESH_OUTPUT for k in readers[name] if k != i)):
                continue
            pairs[i] = (slot, 0)
            break
    return pairs
