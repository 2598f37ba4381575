"""Lowering: StatementIR -> runtime.static.Program, by replaying every statement in static mode.

`lower(sir)` declares one fed var per SIR input (named after its symbol, with its meta's shape,
dtype and stop_gradient), replays the statements through the public API under `program_guard`
(see `replay`), and returns the Program with the names of its feeds and fetches and its
parameter bindings: the persistable vars standing for eager tensors (the Parameters and buffers
of called Layers, eager tensors among the arguments), each mapped to the very tensor it stands
for. A compiled SIR puts those tensors' arrays into its scope as they are (zero copy), so an
optimizer step between calls is seen by the next call without lowering again. The flags of the
bound vars are the tensors' flags at lowering time (a frozen parameter gets no gradient).
"""
from __future__ import annotations

from typing import NamedTuple

from runtime import static
from runtime.static import Program, appending_to
from runtime.tensor import Tensor

from .replay import Binder, replay_sir
from .sir import StatementIR

__all__ = ["lower", "Lowered"]


class Lowered(NamedTuple):
    """A lowered SIR: the Program, its feed and fetch names, and var name -> bound eager tensor."""

    program: Program
    input_names: list[str]
    output_names: list[str]
    bindings: dict[str, Tensor]


def lower(sir: StatementIR) -> Lowered:
    """Build the Program of `sir` (its ops come from replaying the statements, nothing else)."""
    program = Program()
    binder = Binder(program.global_block())
    with appending_to(program):
        feeds = []
        for s in sir.inputs:
            var = static.data(s.name, list(s.meta.shape), s.meta.dtype)
            var.stop_gradient = s.meta.stop_gradient
            feeds.append(var)
        outputs = replay_sir(sir, feeds, binder)
    return Lowered(program, [s.name for s in sir.inputs], [v.name for v in outputs], dict(binder.tensors))
