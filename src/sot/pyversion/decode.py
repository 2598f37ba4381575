"""decode(code) -> NormalisedCode: CPython 3.11/3.12/3.13 bytecode read into the one instruction model.

CPython's own `dis` reads the bytes (it knows each version's operand encoding and inline
caches); this module rewrites what it yields, raw instruction by raw instruction, into the
normalised opnames of `instruction.OPNAMES`. A rewrite may fuse a few adjacent raw instructions
(KW_NAMES+PRECALL+CALL -> CALL) or split one (RETURN_CONST -> LOAD_CONST, RETURN_VALUE); jump
targets and exception-table offsets are then re-pointed at the normalised instructions.
"""
from __future__ import annotations

import bisect
import dis
from types import CodeType
from typing import Callable

from .instruction import (BINARY_OPERATORS, COMPARE_OPERATORS, CONVERSIONS, INTRINSICS_1,
                          INTRINSICS_2, OPNAMES, CodeMeta, DecodeError, ExceptionEntry,
                          Instruction, NormalisedCode)
from .versions import PY311, PY312, PY313

_JUMP_OPS = set(getattr(dis, "hasjump", ())) | set(dis.hasjrel) | set(dis.hasjabs)
_CONST_OPS, _NAME_OPS = set(dis.hasconst), set(dis.hasname)
_VAR_OPS = set(dis.haslocal) | set(dis.hasfree)
_TRUTH_CONSUMERS = frozenset({"POP_JUMP_IF_TRUE", "POP_JUMP_IF_FALSE", "UNARY_NOT"})
# After FOR_ITER's target (END_FOR), how many raw instructions the exhausted loop skips.
_FOR_ITER_SKIP = 2 if PY313 else 1 if PY312 else 0
_OLD_INTRINSICS_1 = {"PRINT_EXPR": "INTRINSIC_PRINT", "IMPORT_STAR": "INTRINSIC_IMPORT_STAR",
                     "UNARY_POSITIVE": "INTRINSIC_UNARY_POSITIVE",
                     "LIST_TO_TUPLE": "INTRINSIC_LIST_TO_TUPLE",
                     "ASYNC_GEN_WRAP": "INTRINSIC_ASYNC_GEN_WRAP"}
_CONDITIONS = ("TRUE", "FALSE", "NONE", "NOT_NONE")
_JUMP_RENAMES = {
    **{f"POP_JUMP_{d}_IF_{c}": f"POP_JUMP_IF_{c}" for d in ("FORWARD", "BACKWARD") for c in _CONDITIONS},
    **{f"POP_JUMP_IF_{c}": f"POP_JUMP_IF_{c}" for c in _CONDITIONS},
    "JUMP_FORWARD": "JUMP", "JUMP_BACKWARD": "JUMP",
}


def decode(code: CodeType) -> NormalisedCode:
    """Normalise the bytecode of `code` (raises DecodeError for bytecode outside the model)."""
    return _Decoder(code).run()


def parse_exception_table(code: CodeType) -> list[tuple[int, int, int, int, bool]]:
    """The entries of co_exceptiontable as (start, end exclusive, target, depth, lasti) byte offsets.
    (`bytecode.ConcreteBytecode.from_code` reads the table too, but decodes every instruction to do
    it: about 25x this parser's time per code object, paid on every translation.)"""
    data, pos, entries = code.co_exceptiontable, 0, []

    def varint() -> int:
        nonlocal pos
        value = data[pos] & 63
        while data[pos] & 64:
            pos += 1
            value = (value << 6) | (data[pos] & 63)
        pos += 1
        return value

    while pos < len(data):
        start = varint() * 2
        end = start + varint() * 2
        target = varint() * 2
        depth_lasti = varint()
        entries.append((start, end, target, depth_lasti >> 1, bool(depth_lasti & 1)))
    return entries


Rewrite = Callable[["_Decoder", int], tuple[int, list[Instruction]]]
_REWRITES: dict[str, Rewrite] = {}


def _rewrite(*opnames: str) -> Callable[[Rewrite], Rewrite]:
    def register(fn: Rewrite) -> Rewrite:
        _REWRITES.update(dict.fromkeys(opnames, fn))
        return fn
    return register


class _Decoder:
    """One decoding: raw instructions, the groups rewritten from them, then re-pointed references."""

    def __init__(self, code: CodeType) -> None:
        self.code = code
        self.raw = [ins for ins in dis.get_instructions(code)
                    if ins.opname not in ("EXTENDED_ARG", "CACHE")]
        self.offsets = [ins.offset for ins in self.raw]
        self.cells = set(code.co_cellvars) | set(code.co_freevars)
        self.jump_targets: dict[int, list[int]] = {}  # raw target index -> raw jump indices
        for r, ins in enumerate(self.raw):
            if ins.opcode in _JUMP_OPS:
                self.jump_targets.setdefault(self.at_or_after(ins.argval), []).append(r)
        self.table = parse_exception_table(code)
        # Where control can arrive other than by falling through: jump and handler targets.
        self.landing = set(self.jump_targets) | {self.at_or_after(t) for _, _, t, _, _ in self.table}
        self.pending: list[tuple[Instruction, int]] = []  # (jump, raw index of its target)
        self.folded_forward: set[int] = set()  # raw indices whose work the next instruction does (TO_BOOL)

    def at_or_after(self, offset: int) -> int:
        """The raw instruction starting at `offset` (or right after its EXTENDED_ARG prefix)."""
        return bisect.bisect_left(self.offsets, offset)

    def make(self, r: int, opname: str, **fields) -> Instruction:
        """A normalised instruction carrying the location of raw instruction `r`."""
        raw = self.raw[r]
        lineno = raw.positions.lineno if raw.positions else None
        return Instruction(opname, lineno=lineno, positions=raw.positions, offset=raw.offset, **fields)

    def jump(self, r: int, opname: str, target_raw: int, **fields) -> Instruction:
        """A jump of raw instruction `r` whose target is re-pointed once all groups exist."""
        ins = self.make(r, opname, **fields)
        self.pending.append((ins, target_raw))
        return ins

    def is_next(self, r: int, *opnames: str) -> bool:
        """Whether raw r+1 exists, has one of `opnames`, and no jump lands on it."""
        return (r + 1 < len(self.raw) and self.raw[r + 1].opname in opnames
                and r + 1 not in self.landing)

    def where(self, r: int) -> str:
        """Raw instruction `r` and its source location, for error messages."""
        ins = self.raw[r]
        line = ins.positions.lineno if ins.positions else None
        return f"{ins.opname} at offset {ins.offset} ({self.code.co_filename}:{line}, {self.code.co_qualname})"

    def run(self) -> NormalisedCode:
        groups: list[tuple[int, int, list[Instruction]]] = []  # raw [start, stop) -> outputs
        r = 0
        while r < len(self.raw):
            consumed, out = _REWRITES.get(self.raw[r].opname, _pass_through)(self, r)
            for inner in range(r + 1, r + consumed):
                if inner in self.landing:
                    raise DecodeError(f"a jump lands inside a fused group: {self.where(inner)}")
            if out and any(_starts_line(self.raw[k]) for k in range(r, r + consumed)):
                out[0].starts_line = True
            groups.append((r, r + consumed, out))
            r += consumed
        instructions = [ins for _, _, out in groups for ins in out]
        for ins in instructions:
            if ins.opname not in OPNAMES:
                raise DecodeError(f"{ins.opname} is outside the normalised model "
                                  f"({self.code.co_filename}:{ins.lineno})")
        first, last = self._group_edges(groups)
        for ins, target_raw in self.pending:
            ins.target = first[target_raw]
            if ins.target is None:
                raise DecodeError(f"jump past the last instruction in {self.code.co_qualname}")
        return NormalisedCode(tuple(instructions), self._exception_entries(first, last, instructions),
                              CodeMeta.from_code(self.code))

    def _group_edges(self, groups: list[tuple[int, int, list[Instruction]]]
                     ) -> tuple[list[Instruction | None], list[Instruction | None]]:
        """For each raw index: the first / last normalised instruction standing for it.

        A raw instruction that became nothing (PRECALL, a TO_BOOL folded into its jump) stands
        for the next instruction when something jumps to it or a range starts at it, and for
        the previous one when a range ends at it, except a folded TO_BOOL: the jump doing its
        work (which may raise) stays in the range that protected it.
        """
        n = len(self.raw)
        first: list[Instruction | None] = [None] * (n + 1)
        last: list[Instruction | None] = [None] * (n + 1)
        for start, stop, out in groups:
            for k in range(start, stop):
                if out:
                    first[k], last[k] = out[0], out[-1]
        for k in range(n - 1, -1, -1):
            first[k] = first[k] or first[k + 1]
        prev = None
        for k in range(n):
            last[k] = prev = first[k + 1] if k in self.folded_forward else last[k] or prev
        return first, last

    def _exception_entries(self, first: list[Instruction | None], last: list[Instruction | None],
                           instructions: list[Instruction]) -> tuple[ExceptionEntry, ...]:
        position = {id(ins): n for n, ins in enumerate(instructions)}
        entries = []
        for start, end, target, depth, lasti in self.table:
            s = first[self.at_or_after(start)]
            e = last[self.at_or_after(end) - 1]
            if s is None or e is None or position[id(s)] > position[id(e)]:
                continue  # the range held only instructions the model drops
            entries.append(ExceptionEntry(s, e, first[self.at_or_after(target)], depth, lasti))
        return tuple(entries)


def _starts_line(raw: dis.Instruction) -> bool:
    return raw.starts_line is not None and raw.starts_line is not False


def _pass_through(d: _Decoder, r: int) -> tuple[int, list[Instruction]]:
    raw = d.raw[r]
    if raw.opcode in _JUMP_OPS:
        return 1, [d.jump(r, raw.opname, d.at_or_after(raw.argval))]
    if raw.opcode in _CONST_OPS or raw.opcode in _NAME_OPS or raw.opcode in _VAR_OPS:
        return 1, [d.make(r, raw.opname, argval=raw.argval)]
    return 1, [d.make(r, raw.opname, arg=raw.arg, argval=raw.arg)]


@_rewrite(*_JUMP_RENAMES, "JUMP_BACKWARD_NO_INTERRUPT")
def _jump(d: _Decoder, r: int):
    raw = d.raw[r]
    name = _JUMP_RENAMES.get(raw.opname, "JUMP")
    return 1, [d.jump(r, name, d.at_or_after(raw.argval),
                      no_interrupt=raw.opname == "JUMP_BACKWARD_NO_INTERRUPT")]


@_rewrite("JUMP_IF_TRUE_OR_POP", "JUMP_IF_FALSE_OR_POP")
def _jump_or_pop(d: _Decoder, r: int):
    # 3.11 only; 3.12 compiles the same source to COPY 1, POP_JUMP_IF_x, POP_TOP.
    raw = d.raw[r]
    cond = "POP_JUMP_IF_TRUE" if raw.opname == "JUMP_IF_TRUE_OR_POP" else "POP_JUMP_IF_FALSE"
    return 1, [d.make(r, "COPY", arg=1, argval=1), d.jump(r, cond, d.at_or_after(raw.argval)),
               d.make(r, "POP_TOP")]


@_rewrite("FOR_ITER")
def _for_iter(d: _Decoder, r: int):
    # Normalised target: where the loop goes once exhausted (3.12/3.13 jump past END_FOR).
    t = d.at_or_after(d.raw[r].argval)
    if _FOR_ITER_SKIP:
        if d.raw[t].opname != "END_FOR":
            raise DecodeError(f"FOR_ITER does not target END_FOR: {d.where(r)}")
        t += _FOR_ITER_SKIP
    return 1, [d.jump(r, "FOR_ITER", t)]


@_rewrite("END_FOR")
def _end_for(d: _Decoder, r: int):
    # Only reached through instrumentation: FOR_ITER skips it. Kept as the pops it does when
    # something other than a FOR_ITER jumps to it.
    if all(d.raw[j].opname == "FOR_ITER" for j in d.jump_targets.get(r, ())):
        if PY313 and d.is_next(r, "POP_TOP"):
            return 2, []
        return 1, []
    return 1, [d.make(r, "POP_TOP") for _ in range(1 if PY313 else 2)]


@_rewrite("KW_NAMES")
def _kw_names(d: _Decoder, r: int):
    # 3.11: KW_NAMES, PRECALL, CALL; 3.12: KW_NAMES, CALL.
    kwnames = d.code.co_consts[d.raw[r].arg]
    call = r + 1 + (r + 1 < len(d.raw) and d.raw[r + 1].opname == "PRECALL")
    if call >= len(d.raw) or d.raw[call].opname != "CALL":
        raise DecodeError(f"KW_NAMES not followed by CALL: {d.where(r)}")
    return call + 1 - r, [d.make(call, "CALL", arg=d.raw[call].arg, argval=d.raw[call].arg,
                                 kwnames=kwnames)]


@_rewrite("PRECALL")
def _precall(d: _Decoder, r: int):
    if not d.is_next(r, "CALL"):
        raise DecodeError(f"PRECALL not followed by CALL: {d.where(r)}")
    arg = d.raw[r + 1].arg
    return 2, [d.make(r + 1, "CALL", arg=arg, argval=arg)]


@_rewrite("LOAD_CONST")
def _load_const(d: _Decoder, r: int):
    if d.is_next(r, "CALL_KW"):  # 3.13 pushes the keyword names as a constant
        arg = d.raw[r + 1].arg
        return 2, [d.make(r + 1, "CALL", arg=arg, argval=arg, kwnames=d.raw[r].argval)]
    return 1, [d.make(r, "LOAD_CONST", argval=d.raw[r].argval)]


@_rewrite("CALL_KW")
def _lone_call_kw(d: _Decoder, r: int):
    raise DecodeError(f"CALL_KW whose keyword names are not a constant: {d.where(r)}")


@_rewrite("RETURN_CONST")
def _return_const(d: _Decoder, r: int):
    return 1, [d.make(r, "LOAD_CONST", argval=d.raw[r].argval), d.make(r, "RETURN_VALUE")]


@_rewrite("LOAD_ATTR", "LOAD_METHOD")
def _load_attr(d: _Decoder, r: int):
    raw = d.raw[r]
    is_method = raw.opname == "LOAD_METHOD" or (not PY311 and bool(raw.arg & 1))
    return 1, [d.make(r, "LOAD_ATTR", argval=raw.argval, is_method=is_method)]


@_rewrite("LOAD_GLOBAL")
def _load_global(d: _Decoder, r: int):
    raw = d.raw[r]
    return 1, [d.make(r, "LOAD_GLOBAL", argval=raw.argval, push_null=bool(raw.arg & 1))]


@_rewrite("LOAD_SUPER_ATTR")
def _load_super_attr(d: _Decoder, r: int):
    raw = d.raw[r]
    return 1, [d.make(r, "LOAD_SUPER_ATTR", argval=raw.argval, is_method=bool(raw.arg & 1),
                      two_arg_super=bool(raw.arg & 2))]


@_rewrite("COMPARE_OP")
def _compare_op(d: _Decoder, r: int):
    raw = d.raw[r]
    op = raw.arg >> 5 if PY313 else raw.arg >> 4 if PY312 else raw.arg
    out = [d.make(r, "COMPARE_OP", arg=op, argval=COMPARE_OPERATORS[op])]
    # 3.13's bool-cast bit is a fused TO_BOOL: kept only where no jump or `not` consumes it.
    if PY313 and raw.arg & 16 and not d.is_next(r, *_TRUTH_CONSUMERS):
        out.append(d.make(r, "TO_BOOL"))
    return 1, out


@_rewrite("TO_BOOL")
def _to_bool(d: _Decoder, r: int):
    # Conditional jumps and UNARY_NOT test truth themselves in the model (as 3.11/3.12 do).
    if d.is_next(r, *_TRUTH_CONSUMERS):
        d.folded_forward.add(r)
        return 1, []
    return 1, [d.make(r, "TO_BOOL")]


@_rewrite("BINARY_OP")
def _binary_op(d: _Decoder, r: int):
    arg = d.raw[r].arg
    return 1, [d.make(r, "BINARY_OP", arg=arg, argval=BINARY_OPERATORS[arg])]


@_rewrite("LOAD_FAST", "LOAD_FAST_CHECK")
def _load_fast(d: _Decoder, r: int):
    return 1, [_local_load(d, r, d.raw[r].argval, d.raw[r].opname == "LOAD_FAST_CHECK")]


def _local_load(d: _Decoder, r: int, name: str, check: bool) -> Instruction:
    if PY313 and name in d.cells:  # 3.13 loads a cell object for a closure with LOAD_FAST
        return d.make(r, "LOAD_CLOSURE", argval=name)
    return d.make(r, "LOAD_FAST", argval=name, checked=PY311 or check)


@_rewrite("LOAD_FAST_LOAD_FAST", "STORE_FAST_LOAD_FAST", "STORE_FAST_STORE_FAST")
def _superinstruction(d: _Decoder, r: int):
    first_op, second_op = d.raw[r].opname.split("_FAST_")
    out = []
    for op, name in zip((first_op, second_op.removesuffix("_FAST")), d.raw[r].argval):
        out.append(_local_load(d, r, name, False) if op == "LOAD"
                   else d.make(r, "STORE_FAST", argval=name))
    return 1, out


@_rewrite("FORMAT_VALUE")
def _format_value(d: _Decoder, r: int):
    conv, has_spec = d.raw[r].arg & 3, d.raw[r].arg & 4
    if has_spec:
        return 1, [d.make(r, "FORMAT_WITH_SPEC", arg=conv, argval=CONVERSIONS[conv])]
    convert = [d.make(r, "CONVERT_VALUE", arg=conv, argval=CONVERSIONS[conv])] if conv else []
    return 1, convert + [d.make(r, "FORMAT_SIMPLE")]


@_rewrite("CONVERT_VALUE")
def _convert_value(d: _Decoder, r: int):
    arg = d.raw[r].arg
    return 1, [d.make(r, "CONVERT_VALUE", arg=arg, argval=CONVERSIONS[arg])]


@_rewrite("FORMAT_WITH_SPEC")
def _format_with_spec(d: _Decoder, r: int):
    return 1, [d.make(r, "FORMAT_WITH_SPEC", arg=0, argval=None)]


@_rewrite("MAKE_FUNCTION")
def _make_function(d: _Decoder, r: int):
    flags, n = d.raw[r].arg or 0, 1
    while d.is_next(r + n - 1, "SET_FUNCTION_ATTRIBUTE"):  # 3.13
        flags |= d.raw[r + n].arg
        n += 1
    return n, [d.make(r, "MAKE_FUNCTION", arg=flags, argval=flags)]


@_rewrite("SET_FUNCTION_ATTRIBUTE")
def _lone_set_function_attribute(d: _Decoder, r: int):
    raise DecodeError(f"SET_FUNCTION_ATTRIBUTE away from MAKE_FUNCTION: {d.where(r)}")


@_rewrite(*_OLD_INTRINSICS_1, "PREP_RERAISE_STAR")
def _old_intrinsic(d: _Decoder, r: int):
    # 3.11's dedicated opcodes for what 3.12 calls intrinsics.
    name = d.raw[r].opname
    if name == "PREP_RERAISE_STAR":
        return 1, [d.make(r, "CALL_INTRINSIC_2", arg=1, argval=INTRINSICS_2[1])]
    arg = INTRINSICS_1.index(_OLD_INTRINSICS_1[name])
    return 1, [d.make(r, "CALL_INTRINSIC_1", arg=arg, argval=INTRINSICS_1[arg])]


@_rewrite("CALL_INTRINSIC_1", "CALL_INTRINSIC_2")
def _intrinsic(d: _Decoder, r: int):
    raw = d.raw[r]
    names = INTRINSICS_1 if raw.opname == "CALL_INTRINSIC_1" else INTRINSICS_2
    return 1, [d.make(r, raw.opname, arg=raw.arg, argval=names[raw.arg])]


@_rewrite("BUILD_SLICE")
def _build_slice(d: _Decoder, r: int):
    # 3.11 spells a[b:c] as BUILD_SLICE 2 + BINARY_SUBSCR / STORE_SUBSCR.
    if d.raw[r].arg == 2 and d.is_next(r, "BINARY_SUBSCR", "STORE_SUBSCR"):
        fused = "BINARY_SLICE" if d.raw[r + 1].opname == "BINARY_SUBSCR" else "STORE_SLICE"
        return 2, [d.make(r + 1, fused)]
    return _pass_through(d, r)


@_rewrite("LOAD_CLASSDEREF")
def _load_classderef(d: _Decoder, r: int):
    # 3.11; 3.12 spells it LOAD_LOCALS + LOAD_FROM_DICT_OR_DEREF.
    return 1, [d.make(r, "LOAD_LOCALS"),
               d.make(r, "LOAD_FROM_DICT_OR_DEREF", argval=d.raw[r].argval)]
