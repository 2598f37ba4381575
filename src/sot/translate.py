"""The frame callback of `to_static`: translate a frame into a guarded, cached code object.

`Translator(code, fallback, cache_size_limit)` is called by the eval-frame hook with an unstarted
frame of `code`. It simulates the frame with the `OpcodeExecutor` (recording tensor work into a
SIR), compiles the SIR (`CompiledSIR`), builds a code object with the original's argument layout
that loads the tensor inputs from where their Trackers say they came from, calls the compiled SIR
and returns its result, and inserts it into the code's `CodeCache` (one per code object, shared by every Translator of that
code; the first one's `cache_size_limit` holds) under the executor's guards,
so the next call with matching inputs is served by the cache in C without calling back.
A frame that cannot be captured runs eagerly (`fallbacks` records why) or, with
`fallback=False`, raises `GraphBreakError(reason, where)`.
"""
from __future__ import annotations

import types
import weakref
from dataclasses import dataclass
from typing import Any, Callable

from sot import config
from sot.dump import dump_translation
from sot.dynamic import Recompile, StaticDimNeeded, check_gradient, policy_of, with_eager_errors
from sot.eval_frame import CallWithCallback, CustomCode, get_code_cache, set_code_cache
from sot.guards import CodeCache
from sot.ir import CompiledSIR, EagerSIR, Symbol
from sot.opcode_executor import (ConstantVariable, DictVariable, FrameRaises, ListVariable, ObjectVariable,
                                 OpcodeExecutor, TensorVariable, TupleVariable, Unsupported)
from sot.opcode_executor.breaks import GraphBreak
from sot.opcode_executor.resume import break_code, live_state, needed_outputs
from sot.opcode_executor.side_effects import SetAttr, SetGlobal
from sot.opcode_executor.variables import Variable
from sot.pyversion import DecodeError, Instruction, NormalisedCode, encode, versions
from sot.reasons import REASONS, Event
from sot.tools import record

__all__ = ["GraphBreakError", "Fallback", "Translator"]

_TRANSLATED: "weakref.WeakKeyDictionary[types.FunctionType, Any]" = weakref.WeakKeyDictionary()
_SHARED_CODE_CACHE_LIMIT = 64  # entries for a callee translated on its own at a break
_EAGER = CustomCode(None, True)  # the original code, with the hook off for its callees
# what an op's meta function raises for a bad call (as eager code does); any other exception
# during translation is a gap of the JIT, which fallback=False must report, never hide
_USER_ERRORS = (ValueError, TypeError, IndexError, KeyError, ZeroDivisionError, OverflowError)


class GraphBreakError(RuntimeError):
    """A frame could not be captured whole and `fallback=False` asked for no eager fallback."""

    def __init__(self, reason: str, where: str, code: str = "SOT-G001"):
        self.reason = reason
        self.where = where
        self.code = code
        super().__init__(f"cannot capture the frame: [{code}] {reason} ({where}); hint: {REASONS[code].hint}")


@dataclass(frozen=True)
class Fallback:
    """One frame that ran eagerly, and why (`code`: its entry in sot.reasons.REASONS)."""

    reason: str
    where: str
    code: str = "SOT-G001"


class _HookCache(CodeCache):
    """The code's CodeCache as the C hook reads it (once it gave up, the original code runs, its callees
    unhooked), with what every Translator of that code shares: the break each entry's code makes, and the
    translators its breaks made (resume functions, callees translated as frames of their own)."""

    gave_up = _EAGER

    def __init__(self, code: types.CodeType, cache_size_limit: int, on_limit: str):
        super().__init__(code, cache_size_limit, on_limit=on_limit)
        self.entry_breaks: dict[int, Event] = {}
        self.entry_eager: set[int] = set()
        self.children: list[Translator] = []


class Translator:
    """The eval-frame callback for one code object (the decorated function's)."""

    def __init__(self, code: types.CodeType, fallback: bool = True, cache_size_limit: int = 8,
                 on_cache_limit: str = "eager"):
        self.code = code
        self.fallback = fallback
        installed = get_code_cache(code)
        if not isinstance(installed, _HookCache):  # the cache is per code object: share it
            installed = _HookCache(code, cache_size_limit, on_cache_limit)
            set_code_cache(code, installed)
        self.cache = installed
        self.fallbacks: list[Fallback] = []
        self.breaks: list[Event] = []  # graph breaks of its translations, each with its reason code
        self.children = installed.children  # translators of the resume functions and callees its breaks made
        self.entry_breaks = installed.entry_breaks  # cache entry id -> the break its code makes on every run
        self.entry_eager = installed.entry_eager  # ids of entries whose graph runs eagerly (too small)
        self.small_graphs: list[Event] = []  # SOT-C001 decisions of its translations
        self.translations = 0
        self.shapes = policy_of(code)  # which input dims its translations leave dynamic (shared per code)
        self.recompiles: list[Recompile] = []  # why each translation after the first was needed
        record.register(self)

    @record.observed  # time spent translating, SOT_LOG events
    def __call__(self, frame: Any) -> Any:
        """Translates a frame of our code on a cache miss; other frames run untouched."""
        if frame.f_code is not self.code:
            return None
        recompile = self.shapes.on_miss(frame, self.cache)
        if recompile is not None:
            self.recompiles.append(recompile)
        ex = None
        self._eager_graph = False
        try:
            ex = OpcodeExecutor(self.code, dict(frame.f_locals), frame.f_globals, frame.f_builtins)
            ex.may_break = self.fallback
            brk = None
            try:
                custom = CustomCode(self._codegen(ex, ex.run()), True)
            except GraphBreak as graph_break:  # its resume functions switch the hook on for themselves
                brk = graph_break
                custom = CustomCode(self._codegen_break(ex, brk), True)
        except StaticDimNeeded as e:  # a dynamic dim was read as a Python int: keep it static, simulate again
            self.shapes.keep_static(e)
            return Translator.__call__.__wrapped__(self, frame)
        except FrameRaises as e:  # the frame raises its own exception: eager code raises it, in any mode
            return self._run_eagerly(ex, Fallback(e.reason, e.where, e.code))
        except (Unsupported, DecodeError) as e:
            return self._cannot_capture(ex, e)
        except _USER_ERRORS as e:  # a meta function rejected the user's call: eager code raises it as it should
            if self.shapes.keep_static_after(ex.inputs if ex is not None else (), e):  # or a dynamic dim's -1 did
                return Translator.__call__.__wrapped__(self, frame)
            return self._run_eagerly(ex, Fallback(f"{type(e).__name__}: {e}", self._where(ex), "SOT-E001"))
        except Exception as e:  # noqa: BLE001 - a gap of the translation itself (NotImplementedError, ...)
            return self._cannot_capture(ex, e)
        self.translations += 1
        entry = self.cache.insert(ex.guards(), custom, payload=ex.builder.build())
        if brk is not None:
            self.entry_breaks[entry.id] = self.breaks[-1]
        if self._eager_graph:
            self.entry_eager.add(entry.id)
        return custom

    def _codegen_break(self, ex: OpcodeExecutor, brk: GraphBreak) -> types.CodeType:
        """The compiled prefix, the breaking instruction run for real, resume functions after it; a
        break that cannot be built runs the frame eagerly for the reason of the break."""
        stack, changed, _ = live_state(ex)
        outputs = needed_outputs(ex, [*stack, *changed.values()])
        plan, targets = _effects_plan(ex, outputs)
        ex.builder.set_outputs(outputs)
        compiled = self._compile(ex) if outputs else None
        if isinstance(compiled, CompiledSIR):
            check_gradient(compiled, ex.inputs)
        run_prefix = with_eager_errors(compiled.run_checked, compiled.sir) if compiled else None
        if plan:
            run_prefix = _with_effects(run_prefix, plan, len(ex.inputs))
        try:
            code = break_code(ex, brk, run_prefix, outputs, self._translated,
                              lambda resume: self._resume(resume, ex.f_globals), targets)
        except Unsupported as e:
            cause = brk.cause
            raise Unsupported(cause.opname, cause.where, f"{cause.detail}; {e.detail}", cause.code) from e
        cause = brk.cause
        reason = cause.reason
        if cause.where != ex.where():  # it broke inside an inlined call: recorded with why it breaks here
            reason += f" (inside the call at {ex.where()}: the caller breaks at the call, the callee runs as a " \
                      "translated frame of its own)"
        self.breaks.append(Event(cause.code, reason, cause.where))
        return code

    def _compile(self, ex: OpcodeExecutor) -> CompiledSIR | EagerSIR:
        """The SIR as a compiled Program, or, below the minimum graph size, run through the eager API
        (the decision recorded: SOT-C001)."""
        sir = ex.builder.build()
        if len(sir.statements) >= config.min_graph_size():
            return CompiledSIR(sir)
        self.small_graphs.append(Event("SOT-C001", f"{len(sir.statements)} op(s) < SOT_MIN_GRAPH_SIZE="
                                                   f"{config.min_graph_size()}: run eagerly", ex.where()))
        self._eager_graph = True
        return EagerSIR(sir)

    def _resume(self, code: types.CodeType, f_globals: dict) -> Callable:
        """A resume function, translated when it runs (its translator is a child of this one)."""
        child = Translator(code, fallback=True, cache_size_limit=self.cache.cache_size_limit)
        self.children.append(child)
        return CallWithCallback(types.FunctionType(code, f_globals, code.co_name), child)

    def _translated(self, fn: types.FunctionType) -> Callable:
        """`fn` translated as a frame of its own when called (one wrapper per function)."""
        wrapper = _TRANSLATED.get(fn)
        if wrapper is None:  # its code may be shared by many objects (Layer.__call__: one entry per layer)
            limit = max(self.cache.cache_size_limit, _SHARED_CODE_CACHE_LIMIT)
            child = Translator(fn.__code__, fallback=True, cache_size_limit=limit)
            wrapper = _TRANSLATED[fn] = CallWithCallback(fn, child)
        if wrapper.callback not in self.children:
            self.children.append(wrapper.callback)
        return wrapper

    def _cannot_capture(self, ex: OpcodeExecutor | None, error: Exception) -> CustomCode:
        """The frame cannot be captured whole: GraphBreakError in full-graph mode, else run it eagerly."""
        if isinstance(error, Unsupported):
            reason, where, code = error.reason, error.where, error.code
        else:
            reason, where, code = f"{type(error).__name__}: {error}", self._where(ex), "SOT-G001"
        if not self.fallback:
            raise GraphBreakError(reason, where, code) from error
        return self._run_eagerly(ex, Fallback(reason, where, code))

    def _where(self, ex: OpcodeExecutor | None) -> str:
        """file:line of the instruction the simulation stopped at (the definition before it started)."""
        return ex.where() if ex is not None else _where(self.code)

    def _run_eagerly(self, ex: OpcodeExecutor | None, fallback: Fallback) -> CustomCode:
        """Record why the frame runs eagerly, and cache that decision under the guards the simulation
        relied on up to its failure, so the next such call is not simulated again."""
        self.fallbacks.append(fallback)
        self.cache.insert(ex.guards() if ex is not None else (), _EAGER, payload=fallback)
        return _EAGER

    def _codegen(self, ex: OpcodeExecutor, returned: Variable) -> types.CodeType:
        """A code object with the original layout: load the tensor inputs, call the SIR runner, return."""
        outputs: list[Symbol] = []
        template = _template(ex, returned, outputs)
        plan, targets = _effects_plan(ex, outputs)
        ex.builder.set_outputs(outputs)
        compiled = self._compile(ex) if outputs else None
        if isinstance(compiled, CompiledSIR):  # with dynamic dims: gradient rules that need sizes specialise
            check_gradient(compiled, ex.inputs)
        runner = _runner(compiled, template) if not plan else _runner_with_effects(compiled, template, plan,
                                                                                   len(ex.inputs))
        if compiled is not None:  # with dynamic dims, a size eager code rejects raises eager's error
            runner = with_eager_errors(runner, compiled.sir)
        line = self.code.co_firstlineno
        free = self.code.co_freevars  # a closure's tensors are loaded with LOAD_DEREF: copy the cells in first
        body = [Instruction("COPY_FREE_VARS", arg=len(free), argval=len(free))] if free else []
        body += [Instruction("RESUME", arg=0, argval=0)]
        call_slots = [Instruction("LOAD_CONST", argval=runner), Instruction("PUSH_NULL")]
        body += call_slots if versions.NULL_AFTER_CALLABLE else call_slots[::-1]
        for var in [*ex.inputs, *targets]:  # the side effects' targets after the tensor inputs
            body += var.tracker.load()
        n_args = len(ex.inputs) + len(targets)
        body += [Instruction("CALL", arg=n_args, argval=n_args), Instruction("RETURN_VALUE")]
        for ins in body:
            ins.lineno = line
        body[0].starts_line = True
        generated = encode(NormalisedCode(tuple(body), (), ex.normalised.meta), template=self.code)
        dump_translation(self.code, ex.builder.build(),
                         compiled.lowered.program if isinstance(compiled, CompiledSIR) else None, generated,
                         ex.guards())
        return generated


def _where(code: types.CodeType) -> str:
    """file:line of a code object's definition."""
    return f"{code.co_filename}:{code.co_firstlineno}"


def _template(ex: OpcodeExecutor, var: Variable, outputs: list[Symbol]) -> Any:
    """The returned value's shape: an index into the SIR outputs per tensor, tuples, lists, dicts, constants."""
    if isinstance(var, TensorVariable) and var.bound:
        return var.value  # a parameter returned as is
    if isinstance(var, TensorVariable) and any(var is v for v in ex.inputs):
        return _In(next(i for i, v in enumerate(ex.inputs) if v is var))  # returned as is, like eager
    if isinstance(var, TensorVariable):
        if var.symbol not in outputs:  # a tensor returned twice is one object twice, as in eager
            outputs.append(var.symbol)
        return _Out(outputs.index(var.symbol))
    if isinstance(var, TupleVariable):
        items = [_template(ex, v, outputs) for v in var.items]
        return items if isinstance(var, ListVariable) else tuple(items)
    if isinstance(var, DictVariable):
        return {k: _template(ex, v, outputs) for k, v in var.items.items()}
    if isinstance(var, ConstantVariable) or (isinstance(var, ObjectVariable) and var.tracker.source is None
                                             and type(var.value).__module__ == "runtime.dtypes"):
        return var.value
    ex.unsupported(f"returning {var!r}")


@dataclass(frozen=True)
class _Out:
    """Position of a returned tensor among the SIR's outputs."""

    index: int


@dataclass(frozen=True)
class _In:
    """Position of a returned tensor among the inputs (returned itself, not a copy)."""

    index: int


def _runner(compiled: CompiledSIR | EagerSIR | None, template: Any) -> Callable:
    """The function the generated code calls: run the SIR and rebuild the returned structure."""
    # the cache's guards already checked every input's shape, dtype and stop_gradient
    if isinstance(template, _Out):  # one tensor returned: the common case, one Python frame per call
        return compiled.output_runner(template.index)

    def run(*tensors: Any) -> Any:
        return _fill(template, compiled.run_checked(*tensors) if compiled is not None else (), tensors)
    return run


def _fill(node: Any, values: tuple, inputs: tuple) -> Any:
    """A template (see `_template`) with the run's outputs and inputs in place."""
    if isinstance(node, _Out):
        return values[node.index]
    if isinstance(node, _In):
        return inputs[node.index]
    if isinstance(node, (tuple, list)):
        return type(node)(_fill(n, values, inputs) for n in node)
    if isinstance(node, dict):
        return {k: _fill(n, values, inputs) for k, n in node.items()}
    return node


def _effects_plan(ex: OpcodeExecutor, outputs: list[Symbol]) -> tuple[list[tuple], list[Variable]]:
    """The recorded side effects as (kind, target index or globals, name, value template), and the
    targets the generated code loads for them (tensors they write join the SIR's `outputs`)."""
    effects = ex.translation.effects
    targets = effects.targets()
    index = {id(t): i for i, t in enumerate(targets)}
    plan = []
    for effect in effects.records:
        if isinstance(effect, SetGlobal):
            plan.append(("global", effect.f_globals, effect.name, _template(ex, effect.value, outputs)))
        elif isinstance(effect, SetAttr):
            plan.append(("attr", index[id(effect.target)], effect.name, _template(ex, effect.value, outputs)))
        else:
            contents = effect.target.items
            value = _template(ex, DictVariable(contents) if isinstance(contents, dict) else ListVariable(contents),
                              outputs)
            plan.append(("refill", index[id(effect.target)], None, value))
    return plan, targets


def _apply(plan: list[tuple], values: tuple, inputs: tuple, targets: tuple) -> None:
    """Make the recorded writes, in order, with the values of this run."""
    for kind, where, name, template in plan:
        value = _fill(template, values, inputs)
        if kind == "global":
            where[name] = value
        elif kind == "attr":
            setattr(targets[where], name, value)
        elif isinstance(targets[where], dict):
            targets[where].clear()
            targets[where].update(value)
        else:
            targets[where][:] = value


def _with_effects(run_prefix: Callable | None, plan: list[tuple], n_inputs: int) -> Callable:
    """A break's prefix runner that also makes the side effects recorded before the break."""
    def run(*args: Any) -> tuple:
        tensors = args[:n_inputs]
        values = run_prefix(*tensors) if run_prefix is not None else ()
        _apply(plan, values, tensors, args[n_inputs:])
        return values
    return run


def _runner_with_effects(compiled: CompiledSIR | EagerSIR | None, template: Any, plan: list[tuple],
                         n_inputs: int) -> Callable:
    """Run the SIR, make the recorded side effects, rebuild the returned structure."""
    def run(*args: Any) -> Any:
        tensors = args[:n_inputs]
        values = compiled.run_checked(*tensors) if compiled is not None else ()
        _apply(plan, values, tensors, args[n_inputs:])
        return _fill(template, values, tensors)
    return run
