"""Program passes run before the InterpreterCore builds its plan.

`apply_passes(program, protected)` clones `program` (the user's Program is never changed) and
runs on the copy's global block, each behind a flag of `runtime.flags`:

1. dead-op elimination (`FLAGS_enable_dead_op_elimination`): walking backwards from the
   `protected` names (feeds, fetches, persistables), drop every op none of whose outputs is
   needed. Ops that are flagged `side_effect`, `inplace` or `random` (a random op advances the
   generator, so dropping it would change the numbers of later random ops) or that write a
   persistable var are always kept. Vars no op names any more are removed.
2. elementwise-chain fusion (`FLAGS_enable_fusion`): a maximal group of ops from
   `runtime.ops.fused.ELEMENTWISE` linked by intermediates that are written once, read by
   exactly one op of the group, and neither protected nor persistable becomes ONE
   `fused_elementwise` op at the position of the group's last op (moving a member's read of an
   outside var there is allowed only when no op in between writes that var). The fused op has
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
"""
from __future__ import annotations

from collections import defaultdict

from ..flags import flag
from ..ops.fused import ELEMENTWISE, inplace_kernel
from .framework import Block, Operator, Program

__all__ = ["apply_passes"]

# ops whose outputs never share memory with their inputs (so an output may be overwritten in place)
_FRESH_OUTPUT = ELEMENTWISE | {"fused_elementwise", "matmul", "linear", "linear_grad_input"}


def apply_passes(program: Program, protected: set[str]) -> Program:
    """A copy of `program` with dead ops dropped, elementwise chains fused and in-place pairs marked."""
    new = program.clone()
    keep = set(protected) | _names_in_sub_blocks(new)
    block = new.global_block()
    if flag("FLAGS_enable_dead_op_elimination"):
        _eliminate_dead_ops(block, keep)
    if flag("FLAGS_enable_fusion"):
        _fuse_elementwise_chains(block, keep)
    new._inplace_pairs = _inplace_pairs(block, keep) if flag("FLAGS_enable_inplace") else {}
    new._changed()
    return new


def _names_in_sub_blocks(program: Program) -> set[str]:
    """Vars named by ops of blocks other than the global one: the passes leave them alone."""
    return {n for b in program.blocks[1:] for op in b.ops for n in (*op.input_arg_names, *op.outputs)}


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
    readers: dict[str, set[int]] = defaultdict(set)
    writers: dict[str, list[int]] = defaultdict(list)
    for i, op in enumerate(ops):
        for n in op.input_arg_names:
            readers[n].add(i)
        for n in op.written():
            writers[n].append(i)
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
    fused = []
    for i, op in enumerate(ops):
        if root[i] != i:
            continue
        group = sorted(members[i])
        fused.append(op if len(group) == 1 else _fused_op(block, [ops[m] for m in group]))
    block.ops = fused


def _fused_op(block: Block, group: list[Operator]) -> Operator:
    """One fused_elementwise op for `group` (ops in program order, the last one's output kept)."""
    step_of = {op.outputs[0]: k for k, op in enumerate(group)}
    inputs = list(dict.fromkeys(n for op in group for n in op.inputs if n not in step_of))
    slot = {n: s for s, n in enumerate(inputs)}
    chain = tuple((op.type,
                   tuple(len(inputs) + step_of[n] if n in step_of else slot[n] for n in op.inputs),
                   tuple(sorted(op.attrs.items())))
                  for op in group)
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
