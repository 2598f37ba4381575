"""StatementIR: the tensor work of one captured frame, as statements over symbols
(Paddle SOT's StatementIR).

A StatementIR is purely symbolic: inputs (Symbols the caller feeds), statements in order, and
outputs (Symbols the caller gets back). Real objects appear only where a statement calls them
(a runtime function, a Layer, another SIR) or binds them (eager tensors among the arguments).
Its text form is readable and stable (names come from the SIR, never from memory addresses)::

    StatementIR: SIR_0
      inputs: [var_0: float32[4, 8], var_1: float32[8, 3] requires_grad]
      outputs: [var_3]
      statements:
        api    || var_2 = runtime.matmul(var_0, var_1)  # float32[4, 3] requires_grad
        api    || var_3 = runtime.nn.functional.relu(var_2)  # float32[4, 3] requires_grad

Called SIRs are listed after the SIR that calls them, each once.
"""
from __future__ import annotations

from .statement import LayerStatement, SirStatement, Statement
from .symbol import Symbol

__all__ = ["StatementIR"]


class StatementIR:
    """Inputs, statements and outputs of one subgraph; `str()` gives the text form."""

    def __init__(self, name: str, inputs: list[Symbol], outputs: list[Symbol], statements: list[Statement]):
        self.name = name
        self.inputs = list(inputs)
        self.outputs = list(outputs)
        self.statements = list(statements)

    def layers(self) -> dict[int, str]:
        """`layer_<n>` for each distinct Layer this SIR calls, numbered by first call."""
        names: dict[int, str] = {}
        for st in self.statements:
            if isinstance(st, LayerStatement) and id(st.layer) not in names:
                names[id(st.layer)] = f"layer_{len(names)}"
        return names

    def called_sirs(self) -> list["StatementIR"]:
        """Every SIR reachable through call_sir statements, each once, callers first."""
        found: dict[int, StatementIR] = {}

        def walk(sir: StatementIR) -> None:
            for st in sir.statements:
                if isinstance(st, SirStatement) and id(st.sir) not in found:
                    found[id(st.sir)] = st.sir
                    walk(st.sir)
        walk(self)
        return list(found.values())

    def op_count(self) -> int:
        """Ops it runs: its statements and those of the SIRs it calls, not counting the calls."""
        return sum(not isinstance(st, SirStatement) for s in (self, *self.called_sirs()) for st in s.statements)

    def own_text(self) -> str:
        """The text of this SIR alone (without the SIRs it calls)."""
        layers = self.layers()
        lines = [f"StatementIR: {self.name}",
                 f"  inputs: [{', '.join(f'{s.name}: {s.meta}' for s in self.inputs)}]",
                 f"  outputs: [{', '.join(s.name for s in self.outputs)}]",
                 "  statements:"]
        lines += [f"    {st.text(layers)}" for st in self.statements]
        return "\n".join(lines)

    def __str__(self) -> str:
        return "\n\n".join(sir.own_text() for sir in (self, *self.called_sirs()))

    def __repr__(self) -> str:
        return (f"<StatementIR {self.name}: {len(self.inputs)} inputs, {len(self.statements)} statements, "
                f"{len(self.outputs)} outputs>")
