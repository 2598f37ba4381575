"""Replaying a translation's side effects: the writes and prints the simulation recorded instead of making.

The simulated frame did not write globals, attributes or containers, nor print: it recorded them
(opcode_executor.side_effects). The generated code makes them after the graph ran, in order, with
the run's values: `effects_plan` turns the records into a plan (each value a `returns.template`),
`apply` makes it. When the graph's run raises, eager code would have printed what it prints before
the failing op: `print_before_failure` makes those prints again, through the eager API, and none
of the writes.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from sot.ir import CompiledSIR, EagerSIR, StatementIR, Symbol
from sot.ir.eager import run_eagerly
from sot.opcode_executor import DictVariable, ListVariable, OpcodeExecutor, TupleVariable
from sot.opcode_executor.side_effects import Print, SetAttr, SetGlobal, WriteBack
from sot.opcode_executor.variables import Variable

from .returns import MadeObjects, fill, filler, template

__all__ = ["Reprint", "effects_plan", "compiled_plan", "apply", "raised_while_applying", "with_effects", "runner_with_effects"]


@dataclass(frozen=True)
class Reprint:
    """How a deferred print is made when the run of its subgraph raises: `sir` is the statements
    recorded before the print, with the tensors it prints as outputs, `template` its arguments."""

    sir: StatementIR
    template: Any


def effects_plan(ex: OpcodeExecutor, outputs: list[Symbol], barrier: int | None = None,
                 passed: list[Variable] | None = None, exposed: frozenset[Symbol] = frozenset(),
                 made: MadeObjects | None = None) -> tuple[list[tuple], list[Variable]]:
    """The recorded side effects as (kind, target index or globals or `Reprint`, name or print
    options, value template), and the targets the generated code loads for them (tensors they write
    or print join the SIR's `outputs`, dynamic numbers `passed`: see `returns.template`). At a break,
    the prints the breaking instruction's own simulation recorded (from `barrier` on) are left out:
    that instruction runs for real after the replay. `exposed`, `made`: see `returns.template`."""
    effects = ex.translation.effects
    targets = effects.targets()
    index = {id(t): i for i, t in enumerate(targets)}
    plan = []
    for effect in effects.settled(barrier) if barrier is not None else effects.records:
        if isinstance(effect, Print):
            args = TupleVariable(effect.args)
            plan.append(("print", _reprint(ex, args, effect.position), effect.options,
                         template(ex, args, outputs, passed)))
            continue
        if isinstance(effect, SetGlobal):
            kind, where, key, value = "global", effect.f_globals, effect.name, effect.value
        elif isinstance(effect, SetAttr):
            kind, where, key, value = "attr", index[id(effect.target)], effect.name, effect.value
        elif isinstance(effect, WriteBack):
            kind, where, key, value = "write", index[id(effect.target)], effect.count, effect.value
        elif isinstance(effect.target, ListVariable) and effect.target.unread:  # it only appended: append
            kind, where, key, value = "extend", index[id(effect.target)], None, ListVariable(effect.target.appended)
        else:
            contents = effect.target.items
            kind, where, key = "refill", index[id(effect.target)], None
            value = DictVariable(contents) if isinstance(contents, dict) else ListVariable(contents)
        plan.append((kind, where, key, template(ex, value, outputs, passed, exposed, made)))
    return plan, targets


def _reprint(ex: OpcodeExecutor, args: Variable, position: int) -> Reprint:
    """The `Reprint` of a print of `args` made after the first `position` statements of the SIR."""
    printed: list[Symbol] = []
    shape = template(ex, args, printed)
    sir = ex.builder.build()
    return Reprint(StatementIR(sir.name, sir.inputs, printed, sir.statements[:position]), shape)


def compiled_plan(plan: list[tuple]) -> list[tuple]:
    """`plan` with each value template compiled by `returns.filler`, as `apply` takes it."""
    return [(kind, where, name, filler(shape)) for kind, where, name, shape in plan]


def apply(plan: list[tuple], values: tuple, inputs: tuple, targets: tuple, passed: tuple = ()) -> None:
    """Make the recorded writes and prints of a `compiled_plan`, in order, with the values of this run."""
    for kind, where, name, make in plan:
        value = make(values, inputs, passed)
        if kind == "print":
            print(*value, **name)
        elif kind == "global":
            where[name] = value
        elif kind == "attr":
            setattr(targets[where], name, value)
        elif kind == "write":  # (`name`: how many in-place updates eager makes, each a version step)
            targets[where].set_value(value)
            targets[where]._version += name - 1
        elif kind == "extend":
            targets[where].extend(value)
        elif isinstance(targets[where], dict):
            targets[where].clear()
            targets[where].update(value)
        else:
            targets[where][:] = value


def raised_while_applying(error: BaseException) -> bool:
    """Whether `error` was raised while the recorded side effects were being made: some may be made
    already, so the call must not run again eagerly (it would make them twice)."""
    tb = error.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code is apply.__code__:
            return True
        tb = tb.tb_next
    return False


def _print_before_failure(plan: list[tuple], inputs: tuple) -> None:
    """The subgraph's run raised: make the prints eager code makes before it fails. Each print's
    statements run again through the eager API; the first print that comes after the failing op
    raises that op's eager error instead. The other recorded effects are not made."""
    for kind, reprint, options, _ in plan:
        if kind == "print":
            values = run_eagerly(reprint.sir, inputs)
            print(*fill(reprint.template, values, inputs), **options)


def _run_and_apply(run: Callable | None, plan: list[tuple], args: tuple, n_inputs: int,
                   n_targets: int | None = None, reprint: bool = True, made: Callable | None = None) -> tuple:
    """`run` on the tensor inputs, then the objects the frame constructed (`made`: see
    `returns.MadeObjects.maker`), then the side effects of `plan` (in `args`: the inputs, the
    effects' targets (`n_targets`; None: all the rest), then the passed numbers). `reprint`: if
    `run` raises, make the prints eager makes before the failure (not where the whole call then
    runs again eagerly, see sot.codegen.rerun, which prints them itself)."""
    tensors = args[:n_inputs]
    end = len(args) if n_targets is None else n_inputs + n_targets
    try:
        values = run(*tensors) if run is not None else ()
    except Exception:
        if reprint:
            _print_before_failure(plan, tensors)
        raise
    if made is not None:
        values = made(values, tensors, args[end:])
    apply(plan, values, tensors, args[n_inputs:end], args[end:])
    return values


def with_effects(run_prefix: Callable | None, plan: list[tuple], n_inputs: int, n_targets: int,
                 reprint: bool = True, made: Callable | None = None) -> Callable:
    """A break's prefix runner that also makes the objects the frame constructed and the side effects
    recorded before the break (arguments: the tensor inputs, the effects' targets, the passed numbers;
    `reprint`, `made`: see `_run_and_apply`)."""
    plan = compiled_plan(plan)

    def run(*args: Any) -> tuple:
        return _run_and_apply(run_prefix, plan, args, n_inputs, n_targets, reprint=reprint, made=made)
    return run


def runner_with_effects(compiled: CompiledSIR | EagerSIR | None, shape: Any, plan: list[tuple],
                        n_inputs: int, n_targets: int, made: Callable | None = None) -> Callable:
    """Run the SIR, make the objects the frame constructed and the recorded side effects, rebuild the
    returned structure (`shape`: its `returns.template`; arguments: the tensor inputs, the effects'
    targets, the passed numbers; `made`: see `_run_and_apply`)."""
    run_sir = compiled.run_checked if compiled is not None else None
    reprint = not isinstance(compiled, CompiledSIR)  # a failing Program's call runs again eagerly (see rerun)
    plan, rebuild = compiled_plan(plan), filler(shape)

    def run(*args: Any) -> Any:
        values = _run_and_apply(run_sir, plan, args, n_inputs, n_targets, reprint, made)
        return rebuild(values, args[:n_inputs], args[n_inputs + n_targets:])
    return run
