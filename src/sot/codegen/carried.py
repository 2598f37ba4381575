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

# opname -> how many items it pops (given its argument); what it pushes is its net stack effect plus that
_POPS = {
    **dict.fromkeys(("LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_CONST", "LOAD_DEREF", "LOAD_NAME", "LOAD_GLOBAL",
                     "LOAD_SMALL_INT", "PUSH_NULL"), lambda arg: 0),
    **dict.fromkeys(("LOAD_ATTR", "LOAD_METHOD", "UNARY_NEGATIVE", "UNARY_NOT", "UNARY_INVERT", "TO_BOOL",
                     "GET_ITER"), lambda arg: 1),
    **dict.fromkeys(("BINARY_OP", "COMPARE_OP", "BINARY_SUBSCR", "CONTAINS_OP", "IS_OP"), lambda arg: 2),
    **dict.fromkeys(("BUILD_TUPLE", "BUILD_LIST", "BUILD_SET"), lambda arg: arg),
    "CALL": lambda arg: arg + 2,  # the callable, `self` or NULL, the arguments
    **dict.fromkeys(("NOP", "PRECALL", "KW_NAMES", "EXTENDED_ARG"), lambda arg: 0),
}


def carried_positions(code: types.CodeType) -> list[dis.Positions | None]:
    """For a resume function's `code`: per stack slot at its entry (bottom first), the positions of the
    instruction that pushed it in the user's code, or None where unknown. Empty for other code."""
    instructions = list(dis.get_instructions(code))
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
        pops = _POPS.get(ins.opname)
        if pops is None:
            break
        before = depth - dis.stack_effect(ins.opcode, ins.arg if ins.opcode >= dis.HAVE_ARGUMENT else None)
        pushes = depth - before + pops(ins.arg or 0)
        for slot in set(range(depth - pushes, min(depth, len(found)))) - decided:
            decided.add(slot)
            found[slot] = ins.positions if pushes == 1 else None
        depth = before
        if ins.is_jump_target or depth <= 0:
            break
    return found
