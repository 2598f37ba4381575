"""This package as the executor's program front end (`runtime.executor.program.Frontend`).

The executor sits below `static` and never imports it: what it needs to know about the programs
built here (the default program, the passes, how to make an op, control-flow sub-blocks) it asks
of the object below, which `runtime.static` installs when it is imported.
"""
from __future__ import annotations

from typing import Any

from ..executor.program import InplacePairs
from .control_flow import external_reads, sub_block_indices, sub_program
from .framework import CONTROL_FLOW_OPS, Block, Operator, Program, Variable, default_main_program, var_names
from .passes import apply_passes

__all__ = ["STATIC_FRONTEND"]


def _optimize(program: Program, protected: set[str]) -> tuple[Program, InplacePairs]:
    new = apply_passes(program, protected)
    return new, new._inplace_pairs


def _operator(block: Block, type: str, inputs: list[str | None], outputs: list[str], attrs: dict[str, Any],
              callsite: str) -> Operator:
    return Operator(block, type, inputs, outputs, attrs, callsite)


class _StaticFrontend:
    """The functions of this package the executor calls, by the names its Protocol gives them."""

    control_flow_ops = CONTROL_FLOW_OPS
    program_type = Program
    variable_type = Variable
    default_program = staticmethod(default_main_program)
    var_names = staticmethod(var_names)
    optimize = staticmethod(_optimize)
    operator = staticmethod(_operator)
    sub_block_indices = staticmethod(sub_block_indices)
    external_reads = staticmethod(external_reads)
    sub_program = staticmethod(sub_program)


STATIC_FRONTEND = _StaticFrontend()
