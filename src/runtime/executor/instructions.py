"""The op function list of a build: every op of the prepared program as an Instruction over
integer var slots, with its kernel looked up ONCE (Paddle's BuildOpFuncList and VariableScope).

Before the list is made, `insert_device_copies` puts memcpy_h2d / memcpy_d2h ops (`transfer.py`)
where a value crosses between host and device memory (CuPy's, or emulated), in a copy of the
program. Then every var an op names gets a slot; each instruction holds its inputs and outputs as
slots, which inputs it reads for their buffer and which only for their shape, which it updates in
place, its attributes (without the placement ones the build reads), and the kernel: the
registry's (or the in-place form the passes granted), a copy, or a control-flow kernel running
nested cores.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..ops import registry as _registry
from ..ops.fused import inplace_kernel
from ..ops.registry import OpDef
from .control_flow import ControlFlowKernel, CoreFactory
from .plan import FEED_OP, FETCH_OP, NO_SLOT, Instruction
from .program import Block, InplacePairs, Operator, Program, Variable, frontend
from .stream_analysis import STREAM_ATTR, device_policy, on_device
from .transfer import MEMCPY_D2H, MEMCPY_H2D, d2h_kernel, h2d_kernel, insert_transfers

__all__ = ["OpList", "op_list", "insert_device_copies", "NO_NEED_BUFFER", "PRIORITY_ATTR"]

NOT_KERNELS = (FEED_OP, FETCH_OP, MEMCPY_H2D, MEMCPY_D2H)
PRIORITY_ATTR = "scheduling_priority"   # Paddle's name; lower runs first among ops ready at once
_PLACEMENT_ATTRS = (STREAM_ATTR, PRIORITY_ATTR)   # read by the build, never passed to a kernel

# Inputs whose kernels read only the shape and dtype (Paddle's no-need-buffer inputs): they do
# not extend the var's life; once freed, the var is replaced by a one-element broadcast stub
# of the same shape and dtype, which is all such kernels look at.
NO_NEED_BUFFER: dict[str, tuple[int, ...]] = {"shape": (0,), "numel": (0,), "full_like": (0,)}


def mutated_inputs(op: Operator, opdef: OpDef) -> set[int]:
    """Input positions an in-place kernel updates: those named again as outputs, else all of them."""
    if not opdef.inplace:
        return set()
    named = {p for p, n in enumerate(op.inputs) if n is not None and n in op.outputs}
    return named or {p for p, n in enumerate(op.inputs) if n is not None}


def _meta_outputs(opdef: OpDef, op: Operator, attrs: dict, block: Block) -> int:
    """How many outputs the kernel returns (0: a single array), from the op's meta at build."""
    specs = tuple(None if n is None else block.var(n).spec() for n in op.inputs)
    try:
        meta = opdef.meta(*specs, **attrs)
    except Exception:  # noqa: BLE001 - a hand-built op the meta rejects: trust the recorded outputs
        return len(op.outputs) if len(op.outputs) > 1 else 0
    return len(meta) if type(meta) is tuple else 0


def insert_device_copies(program: Program, holder_vars: frozenset[str], inplace_pairs: InplacePairs,
                         policy: str, cuda: bool = False) -> tuple[Program, InplacePairs]:
    """`program` with memcpy_h2d / memcpy_d2h ops where a value crosses between host and
    device memory, as a copy (the program given to the core never changes), and the
    in-place pairs renumbered; `program` itself when no op runs on a device stream.
    With CuPy (`cuda`) fetches hand out device arrays (they need no copy), and only a program
    that asks for several streams (the "auto" policy, or an op annotated with one) gets copies:
    a one-stream program converts its feeds in its feed ops, in program order on one stream, and
    a copy on a stream of its own is what orders a fed value before kernels on several streams."""
    fe = frontend()
    host_ops = (*NOT_KERNELS, *fe.control_flow_ops)   # never placed on a device stream
    ops = program.global_block().ops
    if cuda and policy != "auto" and all(op.attrs.get(STREAM_ATTR) is None for op in ops):
        return program, inplace_pairs
    policy = device_policy(policy, cuda)

    def device(op: Operator) -> bool:
        if op.type == FETCH_OP:
            return cuda
        return op.type not in host_ops and on_device(op.attrs.get(STREAM_ATTR), policy)
    if not any(device(op) for op in ops if op.type != FETCH_OP):
        return program, inplace_pairs
    program = program.clone()
    block = program.global_block()
    kept = {n for n, v in block.vars.items() if v.persistable} | holder_vars

    def mutated(op: Operator) -> set[int]:
        return set() if op.type in host_ops else mutated_inputs(op, _registry.get_op(op.type))
    moved = insert_transfers(block, device, lambda op: NO_NEED_BUFFER.get(op.type, ()), mutated,
                             kept.__contains__, lambda kind, src, dst, callsite: fe.operator(
                                 block, kind, [src], [dst], {}, callsite))
    program._changed()
    return program, {moved[i]: pair for i, pair in inplace_pairs.items()}


@dataclass
class OpList:
    """The instructions of a program and what the analysis and the generated code need beside them."""

    names: list[str]                 # var names by slot
    ids: dict[str, int]              # var name -> slot
    var_meta: list[Variable]         # the declared var of each slot
    instrs: list[Instruction]
    opdefs: list[OpDef | None]       # the registry op of each kernel instruction
    kernels: list[Any]               # what each instruction calls (None: feed and fetch)
    n_outs: list[int]                # outputs its kernel returns as a tuple (0: a single array)
    annotations: list[str | None]    # the stream each op was annotated with
    effects: list[OpDef | None]      # whose random / side_effect flags order the op
    kernel_lookups: int


def op_list(program: Program, inplace_pairs: InplacePairs, new_core: CoreFactory) -> OpList:
    """The instructions of `program`'s global block; `new_core` makes the cores of control-flow sub-blocks."""
    block = program.global_block()
    names: list[str] = []
    ids: dict[str, int] = {}

    def slot(name: str | None) -> int:
        if name is None:
            return NO_SLOT
        if name not in ids:
            ids[name] = len(names)
            names.append(name)
        return ids[name]

    instrs, opdefs, kernels, n_outs, annotations, effects = [], [], [], [], [], []
    lookups = 0
    control_flow_ops = frontend().control_flow_ops
    for i, op in enumerate(block.ops):
        ins, outs = tuple(slot(n) for n in op.inputs), tuple(slot(n) for n in op.outputs)
        attrs = {k: v for k, v in op.attrs.items() if k not in _PLACEMENT_ATTRS}
        annotations.append(op.attrs.get(STREAM_ATTR))
        opdef, kernel, mutated, shape_only, pair, multi = None, None, set(), (), None, 0
        if op.type in (MEMCPY_H2D, MEMCPY_D2H):
            kernel = h2d_kernel if op.type == MEMCPY_H2D else d2h_kernel
        elif op.type in control_flow_ops:   # runs its sub-blocks' own cores
            kernel = ControlFlowKernel(op, new_core)
            multi = len(op.outputs)
        elif op.type not in NOT_KERNELS:
            opdef = _registry.get_op(op.type)
            lookups += 1
            kernel = opdef.kernel
            mutated = {ins[p] for p in mutated_inputs(op, opdef)}
            shape_only = NO_NEED_BUFFER.get(op.type, ())
            pair = inplace_pairs.get(i)
            into = pair is not None and len(outs) == 1 and ins[pair[0]] != NO_SLOT and inplace_kernel(op.type)
            if into:  # the passes let the op write into that input's buffer
                kernel = into
                mutated.add(ins[pair[0]])
            else:
                pair = None
            multi = _meta_outputs(opdef, op, attrs, block)
        instrs.append(Instruction(
            index=i, type=op.type, kind="kernel" if opdef else op.type, inputs=ins, outputs=outs,
            attrs=attrs, priority=int(op.attrs.get(PRIORITY_ATTR, 0)),
            reads=frozenset(s for p, s in enumerate(ins) if s != NO_SLOT and p not in shape_only),
            shape_reads=frozenset(s for p, s in enumerate(ins) if s != NO_SLOT and p in shape_only),
            writes=frozenset(outs) | mutated, inplace=frozenset(mutated), callsite=op.callsite,
            col=op.attrs.get("col", -1), inplace_pair=pair))
        opdefs.append(opdef)
        kernels.append(kernel)
        n_outs.append(multi)
        effects.append(op.opdef if opdef is None and op.type in control_flow_ops else opdef)
    return OpList(names=names, ids=ids, var_meta=[block.var(n) for n in names], instrs=instrs, opdefs=opdefs,
                  kernels=kernels, n_outs=n_outs, annotations=annotations, effects=effects, kernel_lookups=lookups)
