"""sot.ir: StatementIR (SIR), its builder, lowering to a runtime static Program, and compiled SIRs.

The interface the opcode executor and codegen use:

- `Meta(shape, dtype, stop_gradient)` / `Meta.make(shape, dtype, stop_gradient)` / `Meta.from_tensor(t)`,
  and `Symbol(name, meta)` (`symbol`);
- `SIRBuilder(name=None)`: `add_input(meta) -> Symbol`, `call_api(fn, args, kwargs)`,
  `call_method(name, self_sym, args, kwargs)`, `call_layer(layer, args, kwargs)`,
  `call_sir(sir, args)`, `set_outputs(symbols)`, `build() -> StatementIR`; each call runs only
  meta functions (a static-mode replay) and raises what eager code would (`builder`), or
  `NeedsTensorValue` / `WritesSymbol` / `DynamicShapeOp` (NotImplementedErrors) for what a SIR
  cannot hold or was not allowed to;
- `StatementIR(name, inputs, outputs, statements)` with `str(sir)` its text form, and the four
  statements `ApiStatement`, `MethodStatement`, `LayerStatement`, `SirStatement` (`sir`, `statement`);
- `lower(sir) -> Lowered(program, input_names, output_names, bindings)` (`lower`);
- `CompiledSIR(sir)(*eager_tensors) -> tuple of eager Tensors`, one autograd node per call when
  gradients are needed (`compiled`); `EagerSIR(sir)` the same through the eager API (`eager`).

Nothing here imports the opcode executor; `runtime` never imports `sot`.
"""
from .builder import DynamicShapeOp, NeedsTensorValue, SIRBuilder, WritesSymbol
from .compiled import CompiledSIR
from .eager import EagerSIR
from .lower import Lowered, lower
from .sir import StatementIR
from .statement import ApiStatement, LayerStatement, MethodStatement, SirStatement, Statement
from .symbol import Meta, Symbol

__all__ = ["Meta", "Symbol", "SIRBuilder", "NeedsTensorValue", "WritesSymbol", "DynamicShapeOp", "StatementIR", "Statement", "ApiStatement", "MethodStatement",
           "LayerStatement", "SirStatement", "lower", "Lowered", "CompiledSIR", "EagerSIR"]
