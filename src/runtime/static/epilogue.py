"""Epilogue passes: a conv/linear/matmul and the ops on its fresh output as one op; max_pool without a dead mask.

`apply_epilogue_passes(block, keep)` rewrites a global block in place (apply_passes calls it on
its copy, after elementwise fusion), each part behind a flag of `runtime.flags`:

1. dead masks (`FLAGS_enable_dead_mask_elimination`): a `max_pool` whose mask no op reads and
   that is neither protected nor persistable becomes `max_pool_values`, which computes the
   pooled values only (bit-identical: the same running maximum, no argmax).
2. epilogue fusion (`FLAGS_enable_epilogue_fusion`): a `conv`, or a `linear` or `matmul`
   followed by `batch_norm_infer` (the head; a linear or matmul followed by elementwise ops
   only is left to elementwise fusion and the in-place marks, which already write into its
   fresh output), followed by a chain of ops that each read the previous one's result, where every
   intermediate is written once, read by exactly that next op and neither protected nor
   persistable (so no gradient op or fetch reads it), becomes ONE `fused_epilogue` op at the
   position of the chain's last op. Chain ops are eval-mode `batch_norm_infer` (on the running
   value as its `x`), elementwise ops and `fused_elementwise`; the kernel writes them into the
   head's fresh buffer and is bit-identical to the ops run one by one. A member's reads move to
   the fused op's position only when no op in between writes what they read. A `max_pool_values`
   after a conv's ReLU / batch-norm chain joins it (`pool` attribute): the kernel pools first
   and runs the chain on the pooled values when that keeps the bits (see
   `runtime.ops.fused_conv`), otherwise pools last.
3. batch-norm folding (`FLAGS_fold_batch_norm`, off by default because it changes rounding):
   where the chain starts with a `batch_norm_infer` over the output channels of a `conv` or
   `linear`, the fused op folds it into the head's weight and bias (as torch.compile's freezing
   does), recomputing the fold only when one of the arrays it was computed from changes.
"""
from __future__ import annotations

from collections import defaultdict

from ..flags import flag
from ..ops.fused_conv import FOLDABLE_HEADS, HEADS, STEPS
from ..ops.registry import get_op
from .framework import Block, Operator

__all__ = ["apply_epilogue_passes", "op_uses"]


def apply_epilogue_passes(block: Block, keep: set[str]) -> None:
    """Drop dead max_pool masks and fuse head ops with their epilogues, as the flags allow."""
    if flag("FLAGS_enable_dead_mask_elimination"):
        _drop_dead_masks(block, keep)
    if flag("FLAGS_enable_epilogue_fusion"):
        _fuse_epilogues(block, keep, flag("FLAGS_fold_batch_norm"))


def op_uses(block: Block) -> tuple[dict[str, set[int]], dict[str, list[int]]]:
    """(readers, writers): op indices reading / writing each var of the block (the fusion passes' index)."""
    readers: dict[str, set[int]] = defaultdict(set)
    writers: dict[str, list[int]] = defaultdict(list)
    for i, op in enumerate(block.ops):
        for n in op.input_arg_names:
            readers[n].add(i)
        for n in op.written():
            writers[n].append(i)
    return readers, writers


def _private(block: Block, keep: set[str], name: str) -> bool:
    """True when the passes may drop or absorb var `name`: neither protected nor persistable."""
    return name not in keep and not block.var(name).persistable


# ---------------------------------------------------------------- dead masks
def _drop_dead_masks(block: Block, keep: set[str]) -> None:
    readers, _ = op_uses(block)
    for i, op in enumerate(block.ops):
        if op.type != "max_pool" or len(op.outputs) != 2:
            continue
        mask = op.outputs[1]
        if readers.get(mask) or not _private(block, keep, mask):
            continue
        block.ops[i] = Operator(block, "max_pool_values", op.inputs, [op.outputs[0]], op.attrs, op.callsite)
        if not any(mask in o.outputs for o in block.ops):
            del block.vars[mask]


# ---------------------------------------------------------------- epilogue fusion
def _fuse_epilogues(block: Block, keep: set[str], fold: bool) -> None:
    ops = block.ops
    readers, writers = op_uses(block)
    absorbed: set[int] = set()
    fused: dict[int, Operator] = {}
    for i, op in enumerate(ops):
        if op.type not in HEADS or len(op.outputs) != 1:
            continue
        members = _chain(block, keep, readers, writers, i, absorbed)
        if len(members) > 1 and (op.type == "conv" or ops[members[1]].type == "batch_norm_infer"):
            absorbed.update(members)
            fused[members[-1]] = _fused_op(block, [ops[m] for m in members], fold)
    block.ops = [fused.get(i, op) for i, op in enumerate(ops) if i not in absorbed or i in fused]


def _chain(block: Block, keep: set[str], readers: dict, writers: dict, head: int, taken: set[int]) -> list[int]:
    """Indices of the head op and the steps that can run on its output, in program order (none in `taken`)."""
    ops = block.ops
    members, outside = [head], set(ops[head].input_arg_names)
    value = ops[head].outputs[0]
    while _private(block, keep, value) and len(writers[value]) == 1 and len(readers[value]) == 1:
        (k,) = readers[value]
        step = ops[k]
        pool = step.type == "max_pool_values" and _poolable(ops, members)
        if (k <= members[-1] or k in taken or (step.type not in STEPS and not pool) or len(step.outputs) != 1
                or step.opdef.side_effect
                or (step.type == "batch_norm_infer" and step.inputs[0] != value)
                or (step.type != "batch_norm_infer" and None in step.inputs)):
            break
        if any(not ops[m].written().isdisjoint(outside) for m in range(members[0] + 1, k) if m not in members):
            break  # an op in between writes what the chain reads: its reads cannot move to op k
        members.append(k)
        outside |= set(step.input_arg_names) - {value}
        value = step.outputs[0]
        if pool:
            break
    return members


def _poolable(ops: list[Operator], members: list[int]) -> bool:
    """True when a max pool may end the chain: a conv head and steps that may run after the pooling
    (ReLU, batch norm: the kernel checks at run time that the batch norm keeps the order)."""
    return (ops[members[0]].type == "conv" and len(members) > 1
            and all(ops[m].type in ("relu", "batch_norm_infer") for m in members[1:]))


def _attrs(op: Operator) -> tuple:
    """The op's own attributes (no placement marks) as sorted pairs, hashable."""
    schema = get_op(op.type).attrs
    return tuple(sorted((k, v) for k, v in op.attrs.items() if k in schema))


def _fused_op(block: Block, group: list[Operator], fold: bool) -> Operator:
    """One fused_epilogue op for a head and its steps (in program order); the last step's output kept."""
    head, steps = group[0], group[1:]
    pool = steps.pop() if steps[-1].type == "max_pool_values" else None
    inputs = list(head.inputs)
    slot = {n: s for s, n in reversed(list(enumerate(inputs))) if n is not None}
    chain, value = [], head.outputs[0]
    for op in steps:
        for n in op.input_arg_names:
            if n != value and n not in slot:
                slot[n] = len(inputs)
                inputs.append(n)
        chain.append((op.type, tuple(-1 if n == value else None if n is None else slot[n] for n in op.inputs),
                      _attrs(op)))
        value = op.outputs[0]
    attrs = {"head": head.type, "head_attrs": _attrs(head), "steps": tuple(chain),
             "fold": fold and _foldable(block, head, steps[0]), "pool": () if pool is None else _attrs(pool)}
    value = value if pool is None else pool.outputs[0]
    for op in group[:-1]:
        del block.vars[op.outputs[0]]
    return Operator(block, "fused_epilogue", inputs, [value], attrs, group[-1].callsite)


def _foldable(block: Block, head: Operator, first: Operator) -> bool:
    """True when `first` is a batch norm over the head's output channels, foldable into its weight."""
    if head.type not in FOLDABLE_HEADS or first.type != "batch_norm_infer":
        return False
    rank = len(block.var(head.outputs[0])._shape)
    channel = 1 if head.type == "conv" and not head.attrs.get("channel_last", False) else rank - 1
    return first.attrs.get("channel_axis", 1) == channel
