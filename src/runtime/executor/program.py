"""What the executor reads from a program, and what it asks of the package that built it.

The executor runs programs it does not build. The package that builds them sits above the
executor (it re-exports the `Executor` façade), so the executor depends on no such package: it
reads a program only through the Protocols below, which name exactly the attributes and methods
it uses, and asks the front end installed with `set_frontend` (by that package as it loads, the
way it installs its mode hooks in `runtime.mode`) for what only the builder knows: the default
program, its passes, how to make an op, and the sub-blocks of a control-flow op.
"""
from __future__ import annotations

from typing import Any, Iterator, Protocol, Sequence

import numpy as np

from ..ops.registry import OpDef, TensorSpec

__all__ = ["Variable", "Operator", "Block", "Program", "Frontend", "InplacePairs", "set_frontend", "frontend"]

# op index in the global block -> (input position, output position) whose buffer the op may reuse
InplacePairs = dict[int, tuple[int, int]]


class Variable(Protocol):
    """A declared var: name, shape (-1 for any size), dtype and flags; never a value."""

    name: str
    persistable: bool
    stop_gradient: bool
    is_parameter: bool
    need_check_feed: bool
    _shape: tuple[int, ...]
    _np_dtype: np.dtype

    @property
    def shape(self) -> list[int]: ...

    def spec(self) -> TensorSpec: ...


class Operator(Protocol):
    """One recorded op: its type, input/output var names by position, attributes, and where it was built."""

    block: Block
    type: str
    inputs: list[str | None]
    outputs: list[str]
    attrs: dict[str, Any]
    callsite: str

    @property
    def opdef(self) -> OpDef: ...


class Block(Protocol):
    """Ops in order and the vars they name (a sub-block also sees its ancestors' vars)."""

    program: Program
    vars: dict[str, Variable]
    ops: list[Operator]

    def var(self, name: str) -> Variable: ...

    def has_var(self, name: str) -> bool: ...

    def create_var(self, name: str | None = None, shape: Any = (), dtype: Any = "float32",
                   persistable: bool = False, stop_gradient: bool = True, is_parameter: bool = False,
                   need_check_feed: bool = False) -> Variable: ...


class Program(Protocol):
    """Blocks of vars and ops (block 0 the global one); the executor changes only copies."""

    blocks: list[Block]

    def global_block(self) -> Block: ...

    def list_vars(self) -> Iterator[Variable]: ...

    def clone(self) -> Program: ...

    def structural_hash(self) -> str: ...

    def _changed(self) -> None: ...


class Frontend(Protocol):
    """What the package that builds programs provides the executor."""

    control_flow_ops: frozenset[str]   # op types that run sub-blocks instead of a registry kernel
    program_type: type                  # what `Executor.run` accepts as its program
    variable_type: type                 # a var a fetch list may hold instead of its name

    def default_program(self) -> Program:
        """The program `Executor.run(program=None)` runs (this thread's default main program)."""

    def var_names(self, items: Any, api: str, arg: str) -> list[str]:
        """Names from vars or names (a fetch list); TypeError naming `api` and `arg` otherwise."""

    def optimize(self, program: Program, protected: set[str]) -> tuple[Program, InplacePairs]:
        """A copy of `program` after the passes, which keep every `protected` var, and the
        in-place pairs they marked (the user's program never changes)."""

    def operator(self, block: Block, type: str, inputs: list[str | None], outputs: list[str],
                 attrs: dict[str, Any], callsite: str) -> Operator:
        """A new op of `block`, not yet in its op list (feed, fetch and copy ops)."""

    def sub_block_indices(self, op: Operator) -> tuple[int, ...]:
        """The blocks a control-flow op runs."""

    def external_reads(self, block: Block, results: Sequence[str] = ()) -> list[str]:
        """The names `block`'s ops (or its `results`) read from enclosing blocks, in order of first use."""

    def sub_program(self, program: Program, index: int, fed: Sequence[str]) -> Program:
        """A program whose global block runs block `index` of `program`, the `fed` vars as plain vars."""


_frontend: Frontend | None = None


def set_frontend(front: Frontend) -> None:
    """Install the front end of the package that builds programs (it does so as it loads)."""
    global _frontend
    _frontend = front


def frontend() -> Frontend:
    """The installed front end; RuntimeError when none is (a program runs only once one built it)."""
    if _frontend is None:
        raise RuntimeError("runtime.executor: no program front end is installed (paddle.static installs one "
                           "as it loads)")
    return _frontend
