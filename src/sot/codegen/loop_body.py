"""The body function of a loop run for real (see sot.opcode_executor.loops): its code.

`loop_body(code, normalised, plan, depth)` is the original code entered at the loop body's start
(after a `for` loop's FOR_ITER, with the item pushed), its back edges, exits and `return`s turned
into returns of `(flag, value, *changed locals)`, which the break code's loop (see `break_code`)
reads to go on, return or leave by an exit. One code object per loop and stack depth, so the body
function is translated once however many times the loop is entered.
"""
from __future__ import annotations

import types

from sot.dynamic.shapes import policy_of
from sot.opcode_executor.live import GENERATED
from sot.opcode_executor.loops import LoopPlan, enclosing
from sot.opcode_executor.trackers import LocalTracker
from sot.pyversion import Instruction, NormalisedCode, encode

from .entry import copy_entry, copy_instructions, entry_prologue, with_params
from .resume_code import CodeMap

__all__ = ["ITEM", "body_code", "loop_body", "loop_keyword"]

ITEM = f"{GENERATED}item"  # the body function's first parameter: the loop's item
_BODIES = CodeMap()  # an original code -> its loops' body codes by (plan, stack depth)
_KEYWORDS = CodeMap()  # a body function's code -> "for" or "while": reports name it by its loop


def loop_keyword(code: types.CodeType) -> str | None:
    """"for" or "while" for the code of a loop's body function (it has the user's name), None for other code."""
    return _KEYWORDS.get(code)


def loop_body(code: types.CodeType, normalised: NormalisedCode, plan: LoopPlan, depth: int) -> types.CodeType:
    """The body function's code for `plan`'s loop of `code` (see `body_code`), one per loop and shape."""
    key = (plan, depth)
    known = _BODIES.setdefault(code, {})
    if key not in known:
        known[key] = body_code(normalised, plan, depth)
        _KEYWORDS.set(known[key], "for" if plan.is_for else "while")
    return known[key]


def body_code(normalised: NormalisedCode, plan: LoopPlan, depth: int) -> types.CodeType:
    """The body function's code: the original code entered at the body's start (after a FOR_ITER,
    with the item pushed) with `depth` placeholder stack items under it (the iterator and what lies
    under it), its back edges, exits and `return`s turned into returns of `(flag, value, *changed)`."""
    mapping = copy_instructions(normalised)
    copies = [mapping[id(ins)] for ins in normalised.instructions]

    def returns(flag: int, value_on_stack: bool = False) -> list[Instruction]:
        out = [Instruction("LOAD_CONST", argval=flag)]
        out += [Instruction("SWAP", arg=2, argval=2)] if value_on_stack else [Instruction("LOAD_CONST", argval=None)]
        out += [Instruction("LOAD_FAST", argval=name) for name in plan.changed]
        n = 2 + len(plan.changed)
        return [*out, Instruction("BUILD_TUPLE", arg=n, argval=n), Instruction("RETURN_VALUE")]

    tail: list[Instruction] = []
    continue_block = returns(0)
    tail += continue_block
    exit_blocks = {}
    for i, index in enumerate(plan.exits):
        exit_blocks[index] = returns(2 + i)
        tail += exit_blocks[index]
    position = {id(ins): n for n, ins in enumerate(copies)}
    first = plan.head + 1 if plan.is_for else plan.head
    body: list[Instruction] = []
    for n, ins in enumerate(copies):
        if n == plan.end + 1 and plan.end + 1 in exit_blocks:  # the last test falls through: the loop ends
            body.append(Instruction("JUMP", target=exit_blocks[plan.end + 1][0], lineno=copies[plan.end].lineno))
        if first <= n <= plan.end and ins.opname == "RETURN_VALUE":
            block = returns(1, value_on_stack=True)
            # the copy itself becomes the block's first instruction, so jumps to the return still land on it
            ins.opname, ins.arg, ins.argval = block[0].opname, block[0].arg, block[0].argval
            body += [ins, *block[1:]]
            continue
        if first <= n <= plan.end and ins.target is not None:
            target = position[id(ins.target)]
            if target == plan.head:
                ins.target = continue_block[0]
            elif not plan.head <= target <= plan.end:
                ins.target = exit_blocks[target][0]
        body.append(ins)
    params = [ITEM, *plan.params] if plan.is_for else list(plan.params)
    meta = with_params(normalised.meta, params)  # the user's function's name: see `with_params`
    prologue = entry_prologue(meta)
    prologue += [Instruction("LOAD_CONST", argval=None) for _ in range(depth)]
    prologue += [Instruction("LOAD_FAST", argval=ITEM)] if plan.is_for else []
    prologue.append(Instruction("JUMP", target=copies[first]))
    for ins in [*prologue, *tail]:
        ins.lineno = normalised.instructions[plan.head].lineno
    around = {id(e) for e in enclosing(normalised, plan.head, plan.end)}
    table = tuple(copy_entry(e, mapping) for e in normalised.exception_table if id(e) not in around)
    code = encode(NormalisedCode(tuple(prologue + body + tail), table, meta))
    # its item and the numbers the loop carries (`s += i % 3`) change in every iteration: read as dynamic
    # numbers from its first translation, so it is not translated again per value (a number whose value
    # the body needs is kept static by that translation, with the reason)
    policy_of(code).numbers.make_dynamic({LocalTracker(name).source.text for name in params})
    return code
