"""Control-flow ops as kernels that run nested InterpreterCores (TFRT's `tfrt.if`).

A `cond`, `while` or `while_grad` op of a plan gets a kernel made here at build: it holds one `SubBlock` per
sub-block, whose InterpreterCore is built on the first run that needs it (a branch never taken
is never built) and cached with the op, so later runs do no analysis. The sub-block's core is
fed the values the op read (the front end makes every var a sub-block reads from outside an
input of the op; `program.Frontend.external_reads` names them) and runs SEQUENTIALLY on the thread running the op: the op is one
op of its plan's schedule, and a pool thread waiting on its own pool's work could deadlock.

cond:  pick the branch from the predicate, run its core, return its results.
while: run the body's core while the predicate holds, the body's results becoming the next
       iteration's loop vars (the body block computes the next predicate too).
while_grad: run the loop again keeping each trip's loop vars, then the grad block's core once per
       trip, last trip first, summing the captured vars' gradients.
A result that is one of the op's own inputs (a branch returning a var unchanged, a loop that
never ran) is copied, so the op's outputs never alias its inputs.
"""
from __future__ import annotations

import threading
from typing import Any, Callable, Sequence

from . import cost as _cost
from .program import Operator, Program, frontend

__all__ = ["ControlFlowKernel", "SubBlock", "control_flow_cost", "branch_reads", "CoreFactory"]

# (sub-program, fed names, fetched names) -> an unbuilt core for it, in the scope and place of
# the core whose op this is (that core passes it in: this module is below the core's module)
CoreFactory = Callable[[Program, Sequence[str], Sequence[str]], Any]


class SubBlock:
    """Block `index` of `program` with `fed` inputs and `fetched` results, run by its own core."""

    def __init__(self, program: Program, index: int, fed: Sequence[str], fetched: Sequence[str],
                 new_core: CoreFactory):
        self.program, self.index = program, index
        self.fed, self.fetched = tuple(fed), tuple(fetched)
        self.new_core = new_core
        self.core: Any = None
        self._lock = threading.Lock()

    def _build(self) -> Any:
        with self._lock:
            if self.core is None:
                core = self.new_core(frontend().sub_program(self.program, self.index, list(self.fed)),
                                     self.fed, self.fetched)
                core.prepare()   # built and bound here, once, whichever thread needs it first
                self.core = core
        return self.core

    def run(self, feeds: Sequence[Any]) -> list:
        core = self.core if self.core is not None else self._build()
        return core.run(feeds, parallel=False)


def captured_names(op: Operator) -> list[str]:
    """The names the sub-blocks read for `op.inputs[1:]` (cond) or `op.inputs[1 + n:]` (while),
    from the sub-blocks themselves: the build may have renamed the op's inputs (a device
    program's memcpy copies), never what the sub-blocks call them."""
    program, fe = op.block.program, frontend()
    if op.type == "cond":
        reads = [fe.external_reads(program.blocks[idx], op.attrs[key])
                 for idx, key in zip(fe.sub_block_indices(op), ("true_outs", "false_outs"))]
        return list(dict.fromkeys([*reads[0], *reads[1]]))
    return fe.external_reads(program.blocks[op.attrs["sub_block"]], [*op.attrs["body_outs"], op.attrs["next_cond"]])


def _body(op: Operator, new_core: CoreFactory) -> SubBlock:
    """The loop body of a `while` / `while_grad` op: loop vars and captured vars in, the body's
    results and the next predicate out."""
    a = op.attrs
    return SubBlock(op.block.program, a["sub_block"], [*a["loop_vars"], *captured_names(op)],
                    [*a["body_outs"], a["next_cond"]], new_core)


def branch_reads(op: Operator) -> list[list[int]]:
    """For each branch of a cond (true, false): the positions in `op.inputs` of the vars it reads."""
    program, fe = op.block.program, frontend()
    pos = {n: 1 + k for k, n in enumerate(captured_names(op))}
    return [[pos[n] for n in fe.external_reads(program.blocks[idx], op.attrs[key])]
            for idx, key in zip(fe.sub_block_indices(op), ("true_outs", "false_outs"))]


def _unaliased(results: Sequence[Any], inputs: Sequence[Any]) -> tuple:
    ids = {id(a) for a in inputs}
    return tuple(r.copy() if id(r) in ids else r for r in results)


class ControlFlowKernel:
    """The kernel of a `cond` / `while` / `while_grad` op: (xp, *inputs, **attrs) -> its results
    as a tuple; `sub_blocks` are its cached sub-block runners (`core` None until first needed),
    each built by `new_core`."""

    def __init__(self, op: Operator, new_core: CoreFactory):
        program, fe = op.block.program, frontend()
        self.type = op.type
        if op.type == "cond":
            names = ["", *captured_names(op)]   # by input position (0: the predicate)
            self.reads = branch_reads(op)
            self.sub_blocks = [SubBlock(program, idx, [names[p] for p in reads], op.attrs[key], new_core)
                               for idx, key, reads in zip(fe.sub_block_indices(op), ("true_outs", "false_outs"),
                                                          self.reads)]
            return
        self.n, self.m = len(op.attrs["loop_vars"]), len(captured_names(op))
        self.sub_blocks = [_body(op, new_core)]
        if op.type == "while_grad":
            a = op.attrs
            grad_reads = fe.external_reads(program.blocks[a["grad_block"]], a["grads"])
            position = {name: k for k, name in enumerate(captured_names(op))}
            self.grad_reads = [position[name] for name in grad_reads]
            self.n_diff, self.wanted = len(a["diff"]), list(a["wanted"])
            self.sub_blocks.append(SubBlock(program, a["grad_block"], [*a["loop_vars"], *a["d_next"], *grad_reads],
                                            a["grads"], new_core))

    def __call__(self, xp: Any, pred: Any, *args: Any, **attrs: Any) -> tuple:
        if self.type == "cond":
            branch = 0 if bool(pred.reshape(())) else 1
            inputs = (pred, *args)
            return _unaliased(self.sub_blocks[branch].run([inputs[p] for p in self.reads[branch]]), inputs)
        n, m = self.n, self.m
        state, captured = list(args[:n]), list(args[n:n + m])
        trips = []
        while bool(pred.reshape(())):
            trips.append(state)
            *state, pred = self.sub_blocks[0].run([*state, *captured])
        if self.type == "while":
            return _unaliased(state, args)
        return _unaliased(self._backwards(xp, trips, captured, list(args[n + m:])), args)

    def _backwards(self, xp: Any, trips: list[list], captured: list, d_state: list) -> tuple:
        """The trips of a loop in reverse through the grad block: d(initial loop vars) and the
        summed d(captured) of the wanted captured vars."""
        grad_block, read = self.sub_blocks[1], [captured[k] for k in self.grad_reads]
        total = [xp.zeros_like(captured[k]) for k in self.wanted]
        for state in reversed(trips):
            out = grad_block.run([*state, *d_state, *read])
            d_state = out[:self.n_diff]
            total = [a + b for a, b in zip(total, out[self.n_diff:])]
        return (*d_state, *total)


def control_flow_cost(op: Operator) -> float:
    """Estimated microseconds of one run of the op: its costliest sub-block (a loop counted once,
    as its trip count is known only at run time)."""
    program, fe = op.block.program, frontend()
    best = 0.0
    for idx in fe.sub_block_indices(op):
        block = program.blocks[idx]

        def shape(name: str | None) -> Any:
            return None if name is None else block.var(name)._shape
        total = sum(control_flow_cost(inner) if inner.type in fe.control_flow_ops else
                    _cost.op_cost(inner.type, [shape(n) for n in inner.inputs], [shape(n) for n in inner.outputs])
                    for inner in block.ops)
        best = max(best, total)
    return _cost.OP_OVERHEAD_US + best
