"""The code object a translated frame runs instead of its own, with the original's argument layout.

`whole_frame`: the frame was simulated to its return; the generated code loads the tensor inputs
(and what the side effects write or store) from where their Trackers say they came from, calls the
runner of the compiled SIR once and returns what it rebuilt. `broken_frame`: the simulation stopped
at a graph break; the SIR up to the break (its prefix) and the side effects recorded before it are
what the generated code runs first, then the breaking instruction for real and resume functions
(`break_code`). Both guard the call of a compiled Program so that one failing at run time runs the
frame again eagerly (sot.codegen.rerun). How the SIR is compiled is the caller's (`compile`: the
driver records which graphs it leaves to the eager API).
"""
from __future__ import annotations

import types
from typing import Callable

from sot.dynamic.shapes import check_gradient, with_eager_errors
from sot.ir import CompiledSIR, EagerSIR, Symbol
from sot.opcode_executor import OpcodeExecutor
from sot.opcode_executor.breaks import GraphBreak
from sot.opcode_executor.live import live_values, needed_outputs
from sot.opcode_executor.variables import Variable
from sot.pyversion import Instruction, NormalisedCode, encode, with_null

from .break_code import break_code
from .effects import effects_plan, runner_with_effects, with_effects
from .pysource import Plan, note_plan
from .rerun import guarded_call, rerun_handler
from .returns import MadeObjects, exposed_tensors, runner, template, view_maker

__all__ = ["Compile", "whole_frame", "broken_frame"]

Compile = Callable[[OpcodeExecutor], "CompiledSIR | EagerSIR"]


def whole_frame(ex: OpcodeExecutor, returned: Variable, compile: Compile,
                rerun_after: Callable[[Exception], bool]) -> tuple[types.CodeType, CompiledSIR | EagerSIR | None]:
    """The code of a frame simulated to its return of `returned`, and the graph it runs (None: no tensor
    work). `rerun_after`: see sot.codegen.rerun."""
    outputs: list[Symbol] = []
    passed: list[Variable] = []  # dynamic numbers returned or stored as they came in
    exposed = exposed_tensors(ex, [returned])
    made = MadeObjects()  # objects the frame constructed that it returns or stores
    shape = template(ex, returned, outputs, passed, exposed, made)
    plan, targets = effects_plan(ex, outputs, passed=passed, exposed=exposed, made=made)
    compiled = _compiled(ex, outputs, compile)
    make = made.maker()
    run = runner(compiled, shape, len(ex.inputs)) if not plan and make is None else \
        runner_with_effects(compiled, shape, plan, len(ex.inputs), len(targets), make)
    if compiled is not None:  # with dynamic dims, a size eager code rejects raises eager's error
        run = with_eager_errors(run, compiled.sir)
    code = ex.code
    free = code.co_freevars  # a closure's tensors are loaded with LOAD_DEREF: copy the cells in first
    body = [Instruction("COPY_FREE_VARS", arg=len(free), argval=len(free))] if free else []
    body += [Instruction("RESUME", arg=0, argval=0)]
    call = with_null([Instruction("LOAD_CONST", argval=run)])
    loaded = [*ex.inputs, *targets, *passed]  # the side effects' targets after the tensor inputs, then numbers
    for var in loaded:
        call += var.tracker.load()
    call += [Instruction("CALL", arg=len(loaded), argval=len(loaded))]
    if isinstance(compiled, CompiledSIR):  # a Program that fails at run time: the call runs again eagerly
        guarded, table = guarded_call(call, code, rerun_after)
    else:  # ops run eagerly one by one (EagerSIR) may have updated bound tensors: no second run
        guarded, table = [*call, Instruction("RETURN_VALUE")], ()
    body += guarded
    for ins in body:
        ins.lineno = code.co_firstlineno
    body[0].starts_line = True
    generated = encode(NormalisedCode(tuple(body), table, ex.normalised.meta), template=code)
    note_plan(generated, Plan(graph=run))
    return generated, compiled


def broken_frame(ex: OpcodeExecutor, brk: GraphBreak, compile: Compile, rerun_after: Callable[[Exception], bool],
                 translated: Callable[[types.FunctionType], Callable], make_resume: Callable[..., Callable],
                 hot: frozenset[int], loop: tuple | None) -> types.CodeType:
    """The code of a frame whose simulation stopped at `brk`: the compiled prefix with the side effects
    recorded before the break, the breaking instruction run for real, resume functions after it (see
    `break_code` for `translated`, `make_resume`, `hot` (its `eager`) and `loop`). Raises Unsupported
    when the break cannot be built."""
    live = live_values(brk)
    outputs = needed_outputs(ex, live)
    passed: list[Variable] = []  # dynamic numbers the side effects store (loaded after their targets)
    exposed = exposed_tensors(ex, live)
    made = MadeObjects()  # objects the frame constructed that the side effects store or the frames hold
    plan, targets = effects_plan(ex, outputs, brk.barrier, passed, exposed, made)
    made.collect(ex, live, outputs, passed, exposed)
    available = frozenset(outputs)  # a live view of one of them is made from it, as eager's view
    compiled = _compiled(ex, outputs, compile)
    prefix = compiled.tuple_runner() if isinstance(compiled, CompiledSIR) else compiled.run_checked if compiled \
        else None
    run_prefix = with_eager_errors(prefix, compiled.sir) if compiled else None
    # a Program that fails at run time: the call runs again eagerly (as in `whole_frame`), so the user's
    # own `except` around the failing op sees eager's exception
    guarded = isinstance(compiled, CompiledSIR)
    make = made.maker()
    if plan or make is not None:
        run_prefix = with_effects(run_prefix, plan, len(ex.inputs), len(targets), reprint=not guarded, made=make)
    rerun = (lambda call: rerun_handler(call, ex.code, rerun_after)) if guarded else None
    return break_code(ex, brk, run_prefix, outputs, translated, make_resume, [*targets, *passed], hot, loop, rerun,
                      lambda symbol: view_maker(ex, symbol, available), made)


def _compiled(ex: OpcodeExecutor, outputs: list[Symbol], compile: Compile) -> CompiledSIR | EagerSIR | None:
    """The SIR with `outputs` set, compiled (None: nothing to compute)."""
    ex.builder.set_outputs(outputs)
    compiled = compile(ex) if outputs else None
    if isinstance(compiled, CompiledSIR):  # with dynamic dims: gradient rules that need sizes specialise
        check_gradient(compiled, ex.inputs)
    return compiled
