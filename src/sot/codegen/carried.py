"""What a resume function's stack parameters hold: the source positions of the expressions they carry.

A resume function receives the values left on the stack at the break as parameters with generated
names (see `resume_code`); a guard on one reads `f_locals['__sot_s3_0']`, which users never wrote.
`carried_positions(code)` finds, for each stack slot, the instruction of the user's code that pushed
it, walking back from where the resume function enters its copy of that code, so reports can name
the slot by its expression (`h`, `v.mean()`). The walk is conservative: it stops at an instruction
whose stack use it does not know, at a jump target (the value may come from another path) and at a
slot an instruction pushes with another (a method and its `self`); such slots stay unnamed.
"""
from __future__ import annotations

import dis
import types

__all__ = ["carried_positions"]

# what an instruction pushes: a known count, or (for a load that may push a NULL or `self` too) its net
# stack effect plus the items it pops (a count of pops alone is not enough: 3.11 counts a call's
# arguments against PRECALL, later versions against CALL)
_PUSHES = {
    **dict.fromkeys(("LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_CONST", "LOAD_DEREF", "LOAD_NAME", "LOAD_SMALL_INT",
                     "PUSH_NULL", "UNARY_NEGATIVE", "UNARY_NOT", "UNARY_INVERT", "TO_BOOL", "GET_ITER", "BINARY_OP",
                     "COMPARE_OP", "BINARY_SUBSCR", "CONTAINS_OP", "IS_OP", "BUILD_TUPLE", "BUILD_LIST", "BUILD_SET",
                     "CALL"), 1),
    **dict.fromkeys(("NOP", "PRECALL", "KW_NAMES", "EXTENDED_ARG"), 0),
}
_POPS = {"LOAD_GLOBAL": 0, "LOAD_ATTR": 1, "LOAD_METHOD": 1}


def carried_positions(code: types.CodeType) -> list[dis.Positions | None]:
    """For a resume function's `code`: per stack slot at its entry (bottom first), the positions of the
    instruction that pushed it in the user's code, or None where unknown. Empty for other code, and
    for code whose prologue `dis` cannot size (then no slot is named: a report must not fail on it)."""
    try:
        return _walk(list(dis.get_instructions(code)))
    except ValueError:
        return []


def _walk(instructions: list[dis.Instruction]) -> list[dis.Positions | None]:
    jump = next((i for i, ins in enumerate(instructions) if ins.opcode in dis.hasjrel or ins.opcode in dis.hasjabs),
                None)
    if jump is None:
        return []
    depth = sum(dis.stack_effect(ins.opcode, ins.arg) if ins.opcode >= dis.HAVE_ARGUMENT else
                dis.stack_effect(ins.opcode) for ins in instructions[:jump])
    target = next((i for i, ins in enumerate(instructions) if ins.offset == instructions[jump].argval), None)
    found: list[dis.Positions | None] = [None] * depth
    if target is None:
        return found
    decided: set[int] = set()  # slots whose last push the walk has passed (named or not)
    for ins in reversed(instructions[jump + 1:target]):
        if ins.opname not in _PUSHES and ins.opname not in _POPS:
            break
        net = dis.stack_effect(ins.opcode, ins.arg if ins.opcode >= dis.HAVE_ARGUMENT else None)
        pushes = _PUSHES[ins.opname] if ins.opname in _PUSHES else net + _POPS[ins.opname]
        before = depth - net
        if before < 0 or not 0 <= pushes <= depth:
            break
        for slot in set(range(depth - pushes, min(depth, len(found)))) - decided:
            decided.add(slot)
            found[slot] = ins.positions if pushes == 1 else None
        depth = before
        if ins.is_jump_target or depth <= 0:
            break
    return found
