"""Generated code as Python source a person can read: what SOT_DUMP writes as transformed.py.

The code a translation runs is bytecode (sot.codegen.frame, sot.codegen.break_code); this module
renders it back as Python, from its own instructions, so the source says exactly what runs:
`render(generated)` walks the decoded instructions with a symbolic stack and writes each value
as the expression that computes it. Values that are not literals (the compiled graph's runner,
resume functions, bound tensors, ...) are names bound in `Rendered.namespace`; executing the
source over the user's globals and that namespace gives a function that does what the generated
code does (the tests run both). What the source cannot say is left to bytecode.txt: the
temporaries the bytecode keeps on its value stack (so that `locals()` shows the user's only) are
locals here, and an exception caught around a graph or a breaking instruction is bound to a local
and handled after the `try`, where the bytecode leaves the `except` state first as well.

Codegen tells this module what it cannot see in the instructions (`note_plan`): which constant is
the compiled graph, which are resume functions or a loop's body, and which instruction is the
breaking one. A resume function's or a loop body's code is the user's own bytecode entered after
a prologue: `resume_source` renders its signature and prologue, and shows the user's source lines
from the resumed line on as comments (that code runs as the user's bytecode, with the user's file
and lines, so a debugger steps through the user's own source there).

Shapes the renderer does not know (an instruction outside its table, a protected range with jumps
in it) raise `Unrenderable`; the dump then says so in transformed.py.
"""
from __future__ import annotations

import inspect
import keyword
import linecache
import operator
import re
import types
from dataclasses import dataclass, field
from typing import Any

from sot.opcode_executor.live import GENERATED
from sot.pyversion import Instruction, NormalisedCode, call_slots, decode
from sot.pyversion.instruction import CONDITIONAL_JUMPS

from .resume_code import CodeMap

__all__ = ["Plan", "Rendered", "Unrenderable", "note_plan", "render", "resume_source"]

_LINE_BUDGET = 4000  # a rendering that duplicates shared tails past this is not readable any more


class Unrenderable(Exception):
    """The generated code has a shape this renderer does not write as source."""


@dataclass(frozen=True)
class Plan:
    """What codegen knows of one generated code object that its instructions do not say."""

    graph: Any = None  # the callable that runs the compiled SIR (and rebuilds its outputs)
    resumes: tuple = ()  # the resume functions it calls
    loop_body: Any = None  # the body function of the loop it runs for real
    break_index: int | None = None  # the index of the breaking instruction (or loop head) in its body
    break_opname: str | None = None  # that instruction's opname (checks the decoded code is the one noted)


_PLANS = CodeMap()  # generated code -> its Plan


def note_plan(code: types.CodeType, plan: Plan) -> None:
    """Remember `plan` for the generated `code` (read by `render` when SOT_DUMP writes it)."""
    _PLANS.set(code, plan)


@dataclass
class Rendered:
    """Source of one generated code object: `text` (a module defining the function), the names it
    reads besides the user's globals (`namespace`) and the resume / loop-body functions it calls,
    by the name it calls them (`children`: name -> (kind, code))."""

    text: str
    namespace: dict[str, Any]
    children: dict[str, tuple[str, types.CodeType]] = field(default_factory=dict)


@dataclass(frozen=True)
class _Expr:
    """A value on the symbolic stack: its source `text`; `atom`: needs no parentheses as an operand;
    `reads`: the locals it reads when it is computed by reading locals only (a literal, a local, a
    tuple of them), so it may be written later, until one of them is written; None: anything else,
    bound to a temporary before any statement is written. `items`: the texts of a tuple display's items."""

    text: str
    atom: bool = True
    reads: frozenset[str] | None = None
    items: tuple[str, ...] | None = None

    @property
    def stable(self) -> bool:
        return self.reads is not None

    def operand(self) -> str:
        return self.text if self.atom else f"({self.text})"


def _local(name: str) -> _Expr:
    return _Expr(name, reads=frozenset({name}))


_NULL = object()  # CALL's NULL slot
_EXHAUSTED = object()  # what `next` gives for an exhausted iterator in a FOR_ITER's step
_NULL_FIRST = call_slots(_Expr("f"), _NULL)[0] is _NULL  # the running CPython keeps it below the callable


def _literal(value: Any) -> str | None:
    """Source of a constant that is its own literal (None: it must be named)."""
    if value is None or value is Ellipsis or type(value) in (bool, int, str, bytes):
        return repr(value)
    if type(value) is float or type(value) is complex:
        text = repr(value)
        return text if "nan" not in text and "inf" not in text else None
    if type(value) is tuple:
        items = [_literal(v) for v in value]
        if None in items:
            return None
        return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"
    return None


class _Names:
    """Names for the constants the generated code loads, and the namespace that binds them."""

    def __init__(self, plan: Plan, graph_number: int):
        """`graph_number`: the N of the compiled graph's name, `__compiled_graph_N`."""
        self.namespace: dict[str, Any] = {}
        self.children: dict[str, tuple[str, types.CodeType]] = {}
        self.described: list[str] = []  # "name: what it is" for the header
        self._by_id: dict[int, str] = {}
        self._roles: dict[int, tuple[str, str]] = {}
        if plan.graph is not None:
            self._roles[id(plan.graph)] = (f"__compiled_graph_{graph_number}", "graph")
        for i, fn in enumerate(plan.resumes):
            self._roles[id(fn)] = (f"__resume_{i}", "resume")
        if plan.loop_body is not None:
            self._roles[id(plan.loop_body)] = ("__loop_body", "loop_body")

    def of(self, value: Any) -> _Expr:
        text = _literal(value)
        if text is not None:
            return _Expr(text, atom=not text.startswith("-"), reads=frozenset())
        if id(value) not in self._by_id:
            self._by_id[id(value)] = self._new(value)
        return _Expr(self._by_id[id(value)], reads=frozenset())  # (bound once: never written)

    def bind(self, name: str, value: Any) -> str:
        self.namespace[name] = value
        return name

    def _new(self, value: Any) -> str:
        if value is _EXHAUSTED:
            return self.bind("__exhausted", value)
        role = self._roles.get(id(value))
        if role is not None:
            name, kind = role
            if kind != "graph":
                code = _code_of(value)
                if code is not None:
                    self.children[name] = (kind, code)
            return self.bind(name, value)
        wrapped = getattr(value, "fn", None)  # a callee translated as a frame of its own when it runs
        if getattr(value, "callback", None) is not None and isinstance(getattr(wrapped, "__name__", None), str):
            return self.bind(f"__translated_{_identifier(wrapped.__name__)}_{len(self.namespace)}", value)
        if isinstance(value, types.ModuleType):
            return self.bind(f"__{_identifier(value.__name__)}", value)
        qualname = getattr(value, "__qualname__", None)
        if isinstance(qualname, str) and getattr(value, "__module__", None) is not None:
            name = _NICKNAMES.get((value.__module__, qualname)) or f"__{_identifier(qualname)}"
            if name not in self.namespace or self.namespace[name] is value:
                return self.bind(name, value)
        name = self.bind(f"__const_{len(self.namespace)}", value)
        self.described.append(f"{name}: {_describe(value)}")
        return name


_NICKNAMES = {  # helpers of the generated code, by what they do
    ("sot.codegen.rerun", "_rerunner.<locals>.rerun"): "__rerun_eagerly",
    ("sot.codegen.rebuild", "_entered"): "__enter_grad_mode",
    ("sot.codegen.rebuild", "_function"): "__make_function",
}


def _identifier(text: str) -> str:
    name = re.sub(r"\W", "_", text.replace("<locals>", "").replace(".", "_"))
    return re.sub(r"_+", "_", name).strip("_") or "value"


def _describe(value: Any) -> str:
    """A short description of a named constant for the header (no memory addresses)."""
    shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
    if shape is not None and dtype is not None:
        return f"{type(value).__name__} of shape {list(shape)}, dtype {dtype}"
    return f"a {type(value).__module__}.{type(value).__qualname__}"


def _code_of(fn: Any) -> types.CodeType | None:
    """The code a resume / loop-body callable runs (a translated one wraps the function, one of a closure
    is made per call from the frame's cells)."""
    inner = getattr(fn, "fn", fn)
    code = getattr(inner, "__code__", None) or getattr(fn, "code", None)
    return code if isinstance(code, types.CodeType) else None


@dataclass
class _State:
    """The symbolic stack along one path, and the temporaries whose (stable) value is read where they are."""

    stack: list[Any]
    aliases: dict[str, _Expr]

    def copy(self) -> _State:
        return _State(list(self.stack), dict(self.aliases))


_UNARY = {"UNARY_NEGATIVE": "-", "UNARY_NOT": "not ", "UNARY_INVERT": "~"}
_INPLACE = {op: getattr(operator, name) for op, name in (
    ("+=", "iadd"), ("&=", "iand"), ("//=", "ifloordiv"), ("<<=", "ilshift"), ("@=", "imatmul"), ("*=", "imul"),
    ("%=", "imod"), ("|=", "ior"), ("**=", "ipow"), (">>=", "irshift"), ("-=", "isub"), ("/=", "itruediv"),
    ("^=", "ixor"))}
_JUMP_TESTS = {"POP_JUMP_IF_FALSE": "not {}", "POP_JUMP_IF_TRUE": "{}", "POP_JUMP_IF_NONE": "{} is None",
               "POP_JUMP_IF_NOT_NONE": "{} is not None"}


class _Renderer:
    """Writes the instructions of one generated code object as the body of a Python function."""

    def __init__(self, normalised: NormalisedCode, names: _Names, break_index: int | None, break_note: list[str]):
        self.code = normalised
        self.ins = normalised.instructions
        self.names = names
        self.break_index, self.break_note = break_index, break_note
        self.lines: list[str] = []
        self.fresh = 0
        self.caught: list[str] = []  # the locals exceptions caught around protected ranges are bound to
        self.heads = {normalised.index(i.target) for n, i in enumerate(self.ins)
                      if i.target is not None and normalised.index(i.target) <= n}
        self.entries = {normalised.index(e.start): e for e in normalised.exception_table}
        for e in normalised.exception_table:
            if e.lasti:
                raise Unrenderable("an exception handler entered with the raising instruction's offset")

    # ----- output -----

    def emit(self, depth: int, text: str) -> None:
        if len(self.lines) > _LINE_BUDGET:
            raise Unrenderable(f"more than {_LINE_BUDGET} lines")
        self.lines.append("    " * depth + text)

    def temp(self) -> str:
        self.fresh += 1
        return f"{GENERATED}v{self.fresh - 1}"

    def spill(self, state: _State, depth: int, written: str | None = None) -> None:
        """Bind to temporaries the stack's values a statement could change: each one not a literal or
        a local's read, and the reads of the local `written`, in the order the bytecode computed them."""
        for k, value in enumerate(state.stack):
            if isinstance(value, _Expr) and (not value.stable or written in value.reads):
                name = self.temp()
                self.emit(depth, f"{name} = {value.text}")
                state.stack[k] = _local(name)

    def unalias(self, state: _State, depth: int, local: str | None = None) -> None:
        """Write the assignments of the temporaries whose value reads `local` (None: of every one)."""
        for temp, value in list(state.aliases.items()):
            if local is None or local in value.reads:
                self.emit(depth, f"{temp} = {value.text}")
                del state.aliases[temp]

    def store(self, state: _State, depth: int, target: str, value: _Expr) -> None:
        self.spill(state, depth, target)
        self.unalias(state, depth, target)
        state.aliases.pop(target, None)
        if target.startswith(GENERATED) and value.stable and target not in value.reads:
            state.aliases[target] = value  # a temporary of a literal, a constant or a local: read as that
        elif value.text != target:
            self.emit(depth, f"{target} = {value.text}")

    # ----- paths -----

    def walk(self, i: int, state: _State, depth: int, loops: frozenset[int], entering: bool = False) -> None:
        """Write the path from instruction `i` until it returns (or goes round its loop: `continue`)."""
        tested = None  # a protected range's jump, whose truth test the range's `try` made
        while True:
            if i in loops and not entering:
                self.emit(depth, "continue")
                return
            if i in self.heads and i not in loops:
                self.loop(i, state, depth, loops)
                return
            entering = False
            if i == self.break_index and i != tested:
                for line in self.break_note:
                    self.emit(depth, line)
            if i in self.entries and i != tested:
                i = tested = self.protected(self.entries[i], state, depth, loops)
                if i is None:
                    return
                continue
            ins = self.ins[i]
            if ins.opname == "RETURN_VALUE":
                value = self.pop(state)
                self.spill(state, depth)
                self.emit(depth, f"return {value.text}")
                return
            if ins.opname == "JUMP":
                i = self.code.index(ins.target)
                continue
            if ins.opname in CONDITIONAL_JUMPS:
                value = self.pop(state)
                test = _JUMP_TESTS[ins.opname].format(value.text if ins.opname == "POP_JUMP_IF_TRUE"
                                                      else value.operand())
                self.spill(state, depth)
                self.emit(depth, f"if {test}:")
                self.walk(self.code.index(ins.target), state.copy(), depth + 1, loops)
                i += 1
                continue
            if ins.opname == "FOR_ITER":  # one step (a loop's head is `loop`'s)
                item = self.pop(state) if i == tested else self.next_item(state, depth)  # (taken in the `try`)
                end = self.names.of(_EXHAUSTED).text
                self.emit(depth, f"if {item.text} is {end}:")
                exhausted = state.copy()
                exhausted.stack.pop()  # (the iterator)
                self.walk(self.code.index(ins.target), exhausted, depth + 1, loops)
                state.stack.append(item)
                i += 1
                continue
            i += self.step(ins, i, state, depth)

    def next_item(self, state: _State, depth: int) -> _Expr:
        """A FOR_ITER's `next` of the iterator on top of the stack (left there), bound to a temporary
        (`__exhausted` when it runs out)."""
        self.spill(state, depth)
        item = self.temp()
        self.emit(depth, f"{item} = next({state.stack[-1].text}, {self.names.of(_EXHAUSTED).text})")
        return _local(item)

    def loop(self, head: int, state: _State, depth: int, loops: frozenset[int]) -> None:
        """The loop whose head is `head`: `for` over the iterator a FOR_ITER head reads, else `while True`."""
        last = max(n for n, ins in enumerate(self.ins)
                   if ins.target is not None and self.code.index(ins.target) == head)  # its last back edge
        stored = {ins.argval for ins in self.ins[head:last + 1] if ins.opname in ("STORE_FAST", "DELETE_FAST")}
        for temp, value in list(state.aliases.items()):  # each value the same in every iteration
            if temp in stored or value.reads & stored:
                self.emit(depth, f"{temp} = {value.text}")
                del state.aliases[temp]
        for k, value in enumerate(state.stack):
            if isinstance(value, _Expr) and (not value.stable or value.reads & stored):
                name = self.temp()
                self.emit(depth, f"{name} = {value.text}")
                state.stack[k] = _local(name)
        inner = loops | {head}
        ins = self.ins[head]
        if ins.opname != "FOR_ITER":  # (a `while` loop's head)
            self.emit(depth, "while True:")
            self.loop_body(head, state.copy(), depth + 1, inner, entering=True)
            return
        iterator = state.stack[-1]
        body = state.copy()
        after = self.ins[head + 1]
        if after.opname == "STORE_FAST" and after.argval not in state.aliases:
            variable, start = after.argval, head + 2
        else:
            variable, start = self.temp(), head + 1
            body.stack.append(_local(variable))
        if head == self.break_index:
            for line in self.break_note:
                self.emit(depth, line)
        self.emit(depth, f"for {variable} in {iterator.text}:")
        self.loop_body(start, body, depth + 1, inner)
        state.stack.pop()  # exhausted: the iterator is popped
        self.walk(self.code.index(ins.target), state, depth, loops)

    def loop_body(self, start: int, state: _State, depth: int, loops: frozenset[int], entering: bool = False) -> None:
        """A loop's body from `start`, without the `continue` it would end with."""
        first = len(self.lines)
        self.walk(start, state, depth, loops, entering)
        if len(self.lines) > first + 1 and self.lines[-1] == "    " * depth + "continue":
            self.lines.pop()

    def protected(self, entry: Any, state: _State, depth: int, loops: frozenset[int]) -> int | None:
        """A range of straight-line instructions with a handler: the exception is caught into a local
        and handled after the `try` (with no `except` state, as the generated handler runs); the index
        of the instruction after the range (None: the path returned)."""
        start, end = self.code.index(entry.start), self.code.index(entry.end)
        # a conditional jump's truth test or a FOR_ITER's step may raise: made in the `try`, the jump after it
        test = self.ins[end].opname in ("POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE") or \
            (self.ins[end].opname == "FOR_ITER" and end not in self.heads)
        for ins in self.ins[start:end + 1 - test]:
            if ins.target is not None or ins.opname in ("RETURN_VALUE", "FOR_ITER"):
                raise Unrenderable("a protected range with a jump or a return in it")
        self.spill(state, depth)
        for ins in self.ins[start:end + 1]:  # (the handler reads an alias as the local it aliases)
            if ins.opname in ("STORE_FAST", "DELETE_FAST"):
                self.unalias(state, depth, ins.argval)
        aliases = dict(state.aliases)
        caught = f"{GENERATED}raised_{len(self.caught)}"
        self.caught.append(caught)
        after = self.ins[end + 1] if end + 1 < len(self.ins) else None
        returns = not test and after is not None and after.opname == "RETURN_VALUE"
        if not returns:
            self.emit(depth, f"{caught} = None")
        self.emit(depth, "try:")
        below = list(state.stack[:entry.depth])
        body = len(self.lines)
        for n in range(start, end + 1 - test):
            self.step(self.ins[n], n, state, depth + 1)
        if test and self.ins[end].opname == "FOR_ITER":
            state.stack.append(self.next_item(state, depth + 1))
        elif test:  # the jump itself then tests the truth of a bool, which cannot raise
            truth = self.temp()
            self.emit(depth + 1, f"{truth} = bool({self.pop(state).text})")
            state.stack.append(_local(truth))
        elif returns or (after is not None and after.opname in ("STORE_FAST", "STORE_DEREF") and state.stack
                       and not state.stack[-1].stable):  # what the range computed, returned or stored in it
            self.step(after, end + 1, state, depth + 1) if not returns else \
                self.emit(depth + 1, f"return {self.pop(state).text}")
            end += 1
        self.spill(state, depth + 1)
        if len(self.lines) == body:
            self.emit(depth + 1, "pass")
        self.emit(depth, "except BaseException as __sot_error:")
        self.emit(depth + 1, f"{caught} = __sot_error")
        handler = _State([*below, _local(caught)], aliases)
        if returns:
            self.walk(self.code.index(entry.target), handler, depth, loops)
            return None
        self.emit(depth, f"if {caught} is not None:")
        self.walk(self.code.index(entry.target), handler, depth + 1, loops)
        return end if test else end + 1

    # ----- one instruction -----

    def pop(self, state: _State, n: int | None = None) -> Any:
        if n is None:
            if not state.stack:
                raise Unrenderable("the stack runs out")
            return state.stack.pop()
        if len(state.stack) < n:
            raise Unrenderable("the stack runs out")
        items = state.stack[len(state.stack) - n:]
        del state.stack[len(state.stack) - n:]
        return items

    def push(self, state: _State, text: str, atom: bool = True) -> None:
        state.stack.append(_Expr(text, atom=atom))

    def step(self, ins: Instruction, i: int, state: _State, depth: int) -> int:
        """Write one instruction that goes on to the next; how many instructions it consumed."""
        op, arg, argval = ins.opname, ins.arg, ins.argval
        if op in ("NOP", "RESUME", "COPY_FREE_VARS", "MAKE_CELL"):
            return 1
        if op == "LOAD_CONST":
            state.stack.append(self.names.of(argval))
        elif op in ("LOAD_FAST", "LOAD_DEREF"):
            state.stack.append(state.aliases.get(argval) or _local(argval))
        elif op == "LOAD_CLOSURE":
            state.stack.append(_Expr(f"{GENERATED}cell_of_{argval}"))
        elif op in ("STORE_FAST", "STORE_DEREF"):
            return self.stores(i, state, depth)
        elif op in ("DELETE_FAST", "DELETE_DEREF"):
            # a temporary is deleted so that locals() shows the user's only: here it may stay bound
            if not argval.startswith(GENERATED):
                self.spill(state, depth, argval)
                self.unalias(state, depth, argval)
                self.emit(depth, f"del {argval}")
        elif op == "LOAD_GLOBAL":
            value = _Expr(argval)
            state.stack += [_NULL, value] if ins.push_null and _NULL_FIRST else \
                [value, _NULL] if ins.push_null else [value]
        elif op == "LOAD_ATTR":
            value = _Expr(f"{self.pop(state).operand()}.{argval}")
            state.stack += ([_NULL, value] if _NULL_FIRST else [value, _NULL]) if ins.is_method else [value]
        elif op == "PUSH_NULL":
            state.stack.append(_NULL)
        elif op == "POP_TOP":
            value = self.pop(state)
            if isinstance(value, _Expr) and not value.stable:
                self.spill(state, depth)
                self.emit(depth, value.text)
        elif op == "COPY":
            value = state.stack[-arg] if len(state.stack) >= arg else None
            if isinstance(value, _Expr) and not value.stable:
                self.spill(state, depth)
                value = state.stack[-arg]
            if value is None:
                raise Unrenderable("COPY past the stack")
            state.stack.append(value)
        elif op == "SWAP":
            state.stack[-1], state.stack[-arg] = state.stack[-arg], state.stack[-1]
        elif op == "CALL":
            self.call(ins, state)
        elif op == "CALL_FUNCTION_EX":
            kwargs = self.pop(state) if arg & 1 else None
            args = self.pop(state)
            fn = self.callee(state)[0]
            parts = [f"*{args.operand()}", *([f"**{kwargs.operand()}"] if kwargs is not None else [])]
            self.push(state, f"{fn}({', '.join(parts)})")
        elif op == "BINARY_SUBSCR":
            key = self.pop(state)
            self.push(state, f"{self.pop(state).operand()}[{key.text}]")
        elif op == "BINARY_SLICE":
            stop, start = self.pop(state), self.pop(state)
            self.push(state, f"{self.pop(state).operand()}[{start.text}:{stop.text}]")
        elif op == "BINARY_OP":
            right, left = self.pop(state), self.pop(state)
            if argval in _INPLACE:
                fn = self.names.of(_INPLACE[argval]).text
                self.push(state, f"{fn}({left.text}, {right.text})")
            else:
                self.push(state, f"{left.operand()} {argval} {right.operand()}", atom=False)
        elif op in ("COMPARE_OP", "IS_OP", "CONTAINS_OP"):
            right, left = self.pop(state), self.pop(state)
            symbol = argval if op == "COMPARE_OP" else ("is not" if arg else "is") if op == "IS_OP" else \
                ("not in" if arg else "in")
            self.push(state, f"{left.operand()} {symbol} {right.operand()}", atom=False)
        elif op in _UNARY:
            self.push(state, f"{_UNARY[op]}{self.pop(state).operand()}", atom=False)
        elif op == "TO_BOOL":
            self.push(state, f"bool({self.pop(state).text})")
        elif op == "GET_ITER":
            self.push(state, f"iter({self.pop(state).text})")
        elif op in ("BUILD_TUPLE", "BUILD_LIST", "BUILD_SET"):
            built = self.pop(state, arg)
            items = [v.text for v in built]
            if op == "BUILD_TUPLE":
                text = f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"
                reads = [v.reads for v in built]
                state.stack.append(_Expr(text, reads=None if None in reads else frozenset().union(*reads),
                                         items=tuple(items)))
            elif op == "BUILD_LIST":
                self.push(state, f"[{', '.join(items)}]")
            else:
                self.push(state, f"{{{', '.join(items)}}}" if items else "set()")
        elif op == "BUILD_MAP":
            flat = self.pop(state, 2 * arg)
            pairs = [f"{flat[k].text}: {flat[k + 1].text}" for k in range(0, len(flat), 2)]
            self.push(state, f"{{{', '.join(pairs)}}}")
        elif op == "BUILD_CONST_KEY_MAP":
            keys = self.pop(state)
            values = self.pop(state, arg)
            self.push(state, f"dict(zip({keys.text}, ({''.join(v.text + ', ' for v in values)})))")
        elif op == "BUILD_SLICE":
            parts = [v.text for v in self.pop(state, arg)]
            self.push(state, f"slice({', '.join(parts)})")
        elif op == "UNPACK_SEQUENCE":
            return self.unpack(i, state, depth)
        elif op == "STORE_ATTR":
            target, value = self.pop(state), self.pop(state)
            self.spill(state, depth)
            self.emit(depth, f"{target.operand()}.{argval} = {value.text}")
        elif op == "STORE_SUBSCR":
            key, target, value = self.pop(state), self.pop(state), self.pop(state)
            self.spill(state, depth)
            self.emit(depth, f"{target.operand()}[{key.text}] = {value.text}")
        elif op == "PUSH_EXC_INFO":
            return self.leave_except(i, state)
        else:
            raise Unrenderable(f"the instruction {op}")
        return 1

    def call(self, ins: Instruction, state: _State) -> None:
        args = self.pop(state, ins.arg)
        fn, receiver = self.callee(state)
        positional = args[:len(args) - len(ins.kwnames)]
        keywords = args[len(args) - len(ins.kwnames):]
        parts = [*([receiver.text] if receiver is not None else []), *(a.text for a in positional),
                 *(f"{k}={v.text}" for k, v in zip(ins.kwnames, keywords))]
        self.push(state, f"{fn}({', '.join(parts)})")

    def callee(self, state: _State) -> tuple[str, _Expr | None]:
        """The callable under a call's arguments (and the `self` a method slot holds, None: a NULL)."""
        lower, upper = self.pop(state, 2)
        if lower is _NULL:
            return upper.operand(), None
        if upper is _NULL:
            return lower.operand(), None
        return lower.operand(), upper  # [method, self]: LOAD_ATTR's method form pushes them

    def stores(self, i: int, state: _State, depth: int) -> int:
        self.store(state, depth, self.ins[i].argval, self.pop(state))
        return 1

    def unpack(self, i: int, state: _State, depth: int) -> int:
        """UNPACK_SEQUENCE; with the stores of every item right after it, one assignment to them all."""
        n = self.ins[i].arg
        value = self.pop(state)
        stores = self.ins[i + 1:i + 1 + n]
        if len(stores) == n and all(s.opname in ("STORE_FAST", "STORE_DEREF") for s in stores) and \
                len({s.argval for s in stores}) == n:
            targets = [s.argval for s in stores]
            if value.items is not None and list(value.items) == [(state.aliases.get(t) or _local(t)).text
                                                                 for t in targets]:
                # (the temporaries the bytecode holds on its stack across a break, bound again: as they are)
                return 1 + n
            for target in targets:
                self.spill(state, depth, target)
                self.unalias(state, depth, target)
                state.aliases.pop(target, None)
            self.emit(depth, f"{', '.join(targets)}{',' if n == 1 else ''} = {value.text}")
            return 1 + n
        self.spill(state, depth)
        temps = [self.temp() for _ in range(n)]
        self.emit(depth, f"{', '.join(temps)}{',' if n == 1 else ''} = {value.text}")
        state.stack += [_local(t) for t in reversed(temps)]
        return 1

    def leave_except(self, i: int, state: _State) -> int:
        """PUSH_EXC_INFO, SWAP 2, POP_EXCEPT: a handler leaving the `except` state at once (the source
        handles the caught exception after its `try`, with no `except` state): nothing to write."""
        shape = [(x.opname, x.arg) for x in self.ins[i:i + 3]]
        if shape != [("PUSH_EXC_INFO", None), ("SWAP", 2), ("POP_EXCEPT", None)]:
            raise Unrenderable("an exception handler that stays in its `except` state")
        return 3


def _signature(code: types.CodeType) -> str:
    """The parameter list of `code` (no defaults: the generated code is called with every argument bound)."""
    names = list(code.co_varnames)
    n_pos, n_kw = code.co_argcount, code.co_kwonlyargcount
    params = names[:n_pos]
    if code.co_posonlyargcount:
        params.insert(code.co_posonlyargcount, "/")
    at = n_pos + n_kw
    if code.co_flags & inspect.CO_VARARGS:
        params.append(f"*{names[at]}")
        at += 1
    elif n_kw:
        params.append("*")
    params += names[n_pos:n_pos + n_kw]
    if code.co_flags & inspect.CO_VARKEYWORDS:
        params.append(f"**{names[at]}")
    return ", ".join(params)


def _function_name(code: types.CodeType) -> str:
    name = code.co_name
    return name if name.isidentifier() and not keyword.iskeyword(name) else _identifier(name)


def _source_line(filename: str, lineno: int | None) -> str:
    """The text of one line of the user's source ("" when unknown)."""
    return linecache.getline(filename, lineno).rstrip() if lineno else ""


def render(generated: types.CodeType, graph_number: int = 0, header: list[str] = (),
           break_note: list[str] = ()) -> Rendered:
    """`generated` as a Python module defining one function of its name (see the module docstring).
    `graph_number`: the N of `__compiled_graph_N`, the name of its compiled graph; `header`: comment
    lines put first; `break_note`: comment lines put where the breaking instruction runs. Raises
    Unrenderable."""
    names = _Names(_PLANS.get(generated) or Plan(), graph_number)
    normalised = decode(generated)
    plan = _PLANS.get(generated) or Plan()
    index = plan.break_index
    if index is not None and (index >= len(normalised.instructions)
                              or normalised.instructions[index].opname != plan.break_opname):
        index = None  # (the decoded code is not laid out as noted: the note goes in the header only)
    renderer = _Renderer(normalised, names, index, [f"# {line}" for line in break_note])
    renderer.walk(0, _State([], {}), 1, frozenset())
    lines = [f"# {line}" if line else "#" for line in header]
    if names.described:
        lines += ["#", "# Constants it loads (bound in the namespace the dump describes):"]
        lines += [f"#   {d}" for d in names.described]
    if generated.co_freevars or generated.co_cellvars:
        lines += ["#", f"# {GENERATED}cell_of_<name> stands for the closure cell of <name> (no Python spelling)."]
    lines += ["", "", f"def {_function_name(generated)}({_signature(generated)}):", *renderer.lines, ""]
    if generated.co_freevars:  # free variables: read from an enclosing function's locals
        inner = ["    " + line if line else line for line in lines[lines.index("") + 2:]]
        lines = [*lines[:lines.index("") + 2], f"def __closure({', '.join(generated.co_freevars)}):", *inner,
                 f"    return {_function_name(generated)}", ""]
    return Rendered("\n".join(lines), names.namespace, names.children)


def resume_source(code: types.CodeType, name: str, kind: str) -> str:
    """A resume function's (kind "resume") or a loop body's (kind "loop_body") code as a readable file:
    its signature, what its prologue pushes before it jumps into the user's code, and the user's
    source from the line it enters on, as comments (that part runs as the user's own bytecode)."""
    normalised = decode(code)
    instructions = normalised.instructions
    jump = next((n for n, ins in enumerate(instructions) if ins.opname == "JUMP"), None)
    if jump is None:
        raise Unrenderable("no prologue jump")
    target = instructions[jump].target
    lineno = next((ins.lineno for ins in instructions[normalised.index(target):] if ins.lineno), None)
    stack: list[str] = []
    for ins in instructions[:jump]:  # (the prologues of sot.codegen.resume_code and loop_body)
        if ins.opname == "LOAD_FAST":
            stack.append(ins.argval)
        elif ins.opname == "LOAD_CONST":
            stack.append(ins.argval.__qualname__ if isinstance(ins.argval, type) else repr(ins.argval))
        elif ins.opname == "PUSH_NULL":
            stack.append("NULL")
        elif ins.opname == "CALL":
            del stack[len(stack) - ins.arg:]
            lower, upper = stack.pop(-2), stack.pop()
            stack.append(f"{upper if lower == 'NULL' else lower}()")
        elif ins.opname == "BEFORE_WITH":  # a grad-mode `with` entered again: its __exit__ stays
            manager = stack.pop()
            stack += [f"{manager}.__exit__", f"{manager}.__enter__()"]
        elif ins.opname == "POP_TOP":
            stack.pop()
    where = f"{code.co_filename}:{lineno}"
    what = "the body of the loop" if kind == "loop_body" else "the rest"
    entered = "the `except` handler" if target.opname == "PUSH_EXC_INFO" else target.opname
    lines = [
        f"# {name}: {what} of `{code.co_qualname}` after the graph break, entered at {where}",
        f"# ({entered} of line {lineno}: `{_source_line(code.co_filename, lineno).strip()}`).",
        "# Not rendered as Python: it runs the frame's own bytecode from that instruction on, after a",
        "# prologue that puts the value stack back, so a debugger stepping into it is in the user's",
        f"# file ({code.co_filename}) at the user's lines. Its own translation, when it runs, is dumped",
        "# under this folder's next number (with its transformed.py).",
        "",
        "",
        f"def {_function_name(code)}({_signature(code)}):",
        f"    # value stack on entry (bottom first): [{', '.join(stack)}]",
        f"    # then: jump to line {lineno}",
        "    ...",
        "",
        f"# The user's source from line {lineno} on:",
    ]
    last = max((ins.lineno for ins in instructions[jump + 1:] if ins.lineno), default=lineno or 0)
    lines += [f"# {n:>5} | {_source_line(code.co_filename, n)}".rstrip() for n in range(lineno or 1, last + 1)]
    return "\n".join(lines) + "\n"
