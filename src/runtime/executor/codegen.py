"""Code generation: the plan lowered to Python (one generated straight-line function per run
mode variant), so a run does no name lookup, no registry lookup and no meta inference.

The sequential mode runs the whole plan as one function over local variables, each var dropped
right after its last user, in plan order: its cost per op is one Python call plus the kernel.
The scheduled and parallel runs call one generated function per op over a slot list, with
`_load` and `_commit`. Kernels, attributes, folded constants and validators are globals of the
generated code, bound once; the scope cells of the persistables (`c<slot>`) are bound by the core
per scope. Variants: `traced` calls a hook around each op; `checked` (FLAGS_check_nan_inf) checks
each op's outputs for NaN/Inf right after it ran. `codes` maps each generated code object to its
line -> op table, for `errors.locate`.
"""
from __future__ import annotations

import linecache
import types
from typing import Any, Callable

import numpy as np

from ..ops.registry import OpDef, TensorSpec
from .allocator import kernel_into_block
from .analysis import Analysis
from .nan_inf import check_finite
from .plan import FEED_OP, FETCH_OP, NO_SLOT, Instruction
from .transfer import MEMCPY_H2D

__all__ = ["CodeGen"]


def _validator(opdef: OpDef, attrs: dict) -> Callable[..., None]:
    """Run `opdef`'s meta on actual arrays, once per distinct (shape, dtype) signature."""
    seen: set = set()

    def validate(*arrays: Any) -> None:
        key = tuple(None if a is None else (a.shape, a.dtype) for a in arrays)
        if key not in seen:
            opdef.meta(*(None if a is None else TensorSpec(a.shape, a.dtype) for a in arrays), **attrs)
            seen.add(key)
    return validate


def _owned(a: Any) -> Any:
    """A fetched temporary: itself, or a copy when it is a view of some other buffer."""
    return a if a.base is None else a.copy()


class CodeGen:
    """The generated code of one analysed build: its globals, and each variant made on first use."""

    def __init__(self, analysis: Analysis, xp: Any, n_fetches: int):
        self._a = analysis
        self._xp = xp
        self._n_fetches = n_fetches
        self.g: dict[str, Any] = {}          # globals of the generated code
        self.codes: dict[types.CodeType, tuple[dict[int, int], bool]] = {}   # code -> (line -> op, slotted)
        self._variants: dict[tuple[bool, bool], Callable] = {}   # (traced, checked) -> sequential code
        self._op_fns: dict[bool, list[Callable]] = {}            # checked -> per-op code
        self.folded = self._fold_constants()   # op -> its output, computed at build
        self._copied_in = {ins.inputs[0] for ins in analysis.instrs if ins.kind == MEMCPY_H2D}
        self._bind_globals()

    def _missing(self, v: int) -> None:
        raise ValueError(f"Executor.run: persistable variable '{self._a.plan.var_names[v]}' has no value in the "
                         "scope; run the startup program (or set the variable) first")

    def _bind_globals(self) -> None:
        """Kernels, attributes, validators and helpers, bound once as globals of the generated code."""
        xp = self._xp
        g = self.g
        g.update(_xp=xp, _asarray=xp.asarray, _owned=_owned, _missing=self._missing, _finite=check_finite,
                 _stub=lambda a: xp.broadcast_to(xp.zeros((), a.dtype), a.shape))
        if xp is not np:
            g.update(_to_device=xp.asarray)
        for i, value in self.folded.items():
            g[f"kc{i}"] = value
        for ins, kernel in zip(self._a.instrs, self._a.kernels):
            if kernel is None:
                continue
            i = ins.index
            g[f"k{i}"] = kernel
            if i in self._a.pooled:
                g[f"p{i}"] = kernel_into_block(ins.type)
            for j, value in enumerate(ins.attrs.values()):
                g[f"a{i}_{j}"] = value
        tail = self._a.safety.validate_tail
        if tail is not None:
            for ins, opdef in zip(self._a.instrs[tail:], self._a.opdefs[tail:]):
                if opdef is not None:
                    g[f"_v{ins.index}"] = _validator(opdef, ins.attrs)

    def _fold_constants(self) -> dict[int, Any]:
        """The output, computed once now, of each op that makes the same array on every run: a kernel
        with no input, not random and without side effects (`full`, `assign_value`: the constants of
        a SIR), whose output no op updates in place and no fetch hands out. The array is read-only,
        so a write that slipped through raises instead of changing later runs."""
        fetched = {ins.inputs[0] for ins in self._a.instrs if ins.kind == FETCH_OP}
        updated = {s for ins in self._a.instrs for s in ins.inplace}
        updated |= {ins.inputs[ins.inplace_pair[0]] for ins in self._a.instrs if ins.inplace_pair is not None}
        folded = {}
        a = self._a
        for ins, d, kernel in zip(a.instrs, a.opdefs, a.kernels):
            if (kernel is None or ins.kind != "kernel" or ins.inputs or len(ins.outputs) != 1 or d is None
                    or d.random or d.side_effect or d.inplace or a.n_outs[ins.index] or ins.index in a.pooled):
                continue
            (out,) = ins.outputs
            if out in fetched or out in updated or self._a.var_meta[out].persistable:
                continue
            value = self._xp.asarray(kernel(self._xp, **ins.attrs))
            if self._xp is np:
                value.flags.writeable = False
            folded[ins.index] = value
        return folded

    def _op_lines(self, i: int, ref: Callable[[int], str], checked: bool,
                  into_blocks: bool = False) -> list[tuple[int, str]]:
        """The statements of op `i` (guards, then the kernel call, then, `checked`, the nan/inf
        checks of what it wrote), with vars spelled by `ref`, each with the index of the op an
        error on that line is reported for. `into_blocks` (the per-op code of the scheduler and
        parallel runs): an op whose output a stream allocator provides computes into the block
        found in the output's slot (none in the scheduler mode: the plain kernel runs)."""
        checks = []
        if i == self._a.safety.validate_tail:
            checks = [(t.index, f"_v{t.index}({self._args(t, ref)})") for t in self._a.instrs[i:] if t.kind == "kernel"]
        return checks + [(i, line) for line in self._statements(i, ref, checked, into_blocks)]

    def _statements(self, i: int, ref: Callable[[int], str], checked: bool, into_blocks: bool) -> list[str]:
        ins = self._a.instrs[i]
        lines = []
        for s in (self._a.safety.checked_snapshots if checked else self._a.safety.snapshots).get(i, ()):
            lines.append(f"_s.append(({ref(s)}, {ref(s)}.copy()))")
        if ins.kind == FEED_OP:
            x = ins.outputs[0]
            value = f"feeds[{ins.col}]"
            # skip-inplace: an in-place op must not write the caller's array (a device feed may be one)
            copy = x in self._a.safety.copy_feeds
            if self._xp is not np and x not in self._copied_in:   # else its memcpy_h2d op moves it
                value = f"{'_xp.array' if copy else '_to_device'}({value})"
            elif copy:
                value += ".copy()"
            return lines + [f"{ref(x)} = {value}"]
        if ins.kind == FETCH_OP:
            x = ins.inputs[0]
            value = f"{ref(x)}.copy()" if self._a.var_meta[x].persistable else f"_owned({ref(x)})"
            return lines + [f"r[{ins.col}] = {value}"]
        if i in self.folded:
            return lines + [f"{ref(ins.outputs[0])} = kc{i}", *self._check_lines(i, ref, checked)]
        args, kernel = self._args(ins, ref), f"k{i}"
        if ins.inplace_pair is not None:
            args = f"{ref(ins.inputs[ins.inplace_pair[0]])}, {args}"
        elif into_blocks and i in self._a.pooled:   # the block the stream's allocator bound to the output
            args, kernel = f"{ref(ins.outputs[0])}, {args}", f"p{i}"
        kw = "".join(f", {k}=a{i}_{j}" for j, k in enumerate(ins.attrs))
        call = f"{kernel}(_xp{', ' if args else ''}{args}{kw})"
        outs = [ref(o) for o in ins.outputs]
        n_meta = self._a.n_outs[i]
        if not outs:   # a construct whose branches return nothing
            lines.append(call)
        elif n_meta:
            if n_meta != len(outs):
                call += f"[:{len(outs)}]"
            lines.append(f"{', '.join(outs)}{',' if len(outs) == 1 else ''} = {call}")
        else:
            lines.append(f"{outs[0]} = {call}")
        for o in ins.outputs:
            if self._a.var_meta[o].shape == []:  # NumPy hands back scalars for 0-d results
                lines.append(f"{ref(o)} = _asarray({ref(o)})")
        return lines + self._check_lines(i, ref, checked)

    def _check_lines(self, i: int, ref: Callable[[int], str], checked: bool) -> list[str]:
        """`checked`: the nan/inf checks of what op `i` wrote."""
        if not checked:
            return []
        names = self._a.plan.var_names
        ins = self._a.instrs[i]
        return [f"_finite({ref(v)}, {ins.type!r}, {i}, {names[v]!r})" for v in sorted(ins.writes)]

    @staticmethod
    def _args(ins: Instruction, ref: Callable[[int], str]) -> str:
        return ", ".join("None" if s == NO_SLOT else ref(s) for s in ins.inputs)

    def _free_line(self, v: int, ref: Callable[[int], str]) -> str:
        return f"{ref(v)} = _stub({ref(v)})" if v in self._a.stubbed else f"{ref(v)} = None"

    def _compile_sequential(self, traced: bool, checked: bool = False) -> Callable:
        """The whole plan as one straight-line function, in plan order;
        `traced` calls a hook around each op, `checked` checks each op's outputs for nan/inf."""
        suffix = "_checked" if checked else ""
        if traced:
            def ref(v: int) -> str:
                return f"s[{v}]"
            body = [f"s = [None] * {len(self._a.plan.var_names)}"]
            header = f"def _run_traced{suffix}(feeds, _s, hook):"
        else:
            def ref(v: int) -> str:
                return f"v{v}"
            body = []
            header = f"def _run{suffix}(feeds, _s):"
        body.append(f"r = [None] * {self._n_fetches}")
        body += self._load_lines(ref)
        line_op: dict[int, int] = {}
        for i in range(len(self._a.instrs)):
            if traced:
                body.append(f"hook('start', {i}, s)")
            for op_index, line in self._op_lines(i, ref, checked):
                line_op[len(body) + 2] = op_index  # +1 for the header, +1 for 1-based line numbers
                body.append(line)
            if traced:
                body.append(f"hook('end', {i}, s)")
            for v in self._a.life.free_after[i]:
                body.append(self._free_line(v, ref))
                if traced:
                    body.append(f"hook('free', {v}, s)")
        body += [f"c{v}.value = {ref(v)}" for v in self._a.safety.commits]
        body.append("return r")
        name = header[4:header.index("(")]
        fn = self._exec([header] + ["    " + line for line in body], name, name)
        self.codes[fn.__code__] = (line_op, traced)
        return fn

    def sequential(self, traced: bool, checked: bool) -> Callable:
        """The sequential code of that variant, generated on its first use."""
        fn = self._variants.get((traced, checked))
        if fn is None:
            fn = self._variants[(traced, checked)] = self._compile_sequential(traced, checked)
        return fn

    def _load_lines(self, ref: Callable[[int], str]) -> list[str]:
        out = []
        for v in self._a.safety.loads:
            out += [f"{ref(v)} = c{v}.value", f"if {ref(v)} is None: _missing({v})"]
        return out

    def op_functions(self, checked: bool) -> list[Callable]:
        """One function per op over a slot list (what the scheduler runs), generated on first
        use, with `_load` and `_commit`; `checked` adds the nan/inf checks."""
        fns = self._op_fns.get(checked)
        if fns is not None:
            return fns

        def ref(v: int) -> str:
            return f"s[{v}]"
        suffix = "_checked" if checked else ""
        lines: list[str] = []
        line_op: dict[int, int] = {}
        for i in range(len(self._a.instrs)):
            lines.append(f"def _op{i}{suffix}(s, _s, feeds, r):")
            for op_index, line in self._op_lines(i, ref, checked, into_blocks=True):
                line_op[len(lines) + 1] = op_index
                lines.append("    " + line)
        lines += ["def _load(s):"] + ["    " + x for x in self._load_lines(ref)] + ["    pass"]
        lines += ["def _commit(s):"] + [f"    c{v}.value = s[{v}]" for v in self._a.safety.commits] + ["    pass"]
        self._exec(lines, None, "ops" + suffix)
        fns = self._op_fns[checked] = [self.g[f"_op{i}{suffix}"] for i in range(len(self._a.instrs))]
        for fn in fns:
            self.codes[fn.__code__] = (line_op, True)
        return fns

    def _exec(self, lines: list[str], name: str | None, tag: str) -> Any:
        source = "\n".join(lines) + "\n"
        filename = f"<interpretercore {id(self):x} {tag}>"
        linecache.cache[filename] = (len(source), None, [x + "\n" for x in lines], filename)
        exec(compile(source, filename, "exec"), self.g)  # noqa: S102 - our own generated code
        return self.g[name] if name else None
