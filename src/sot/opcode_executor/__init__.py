"""sot.opcode_executor: simulating a frame's bytecode on Variables that know where they came from.

`OpcodeExecutor(code, f_locals, f_globals, f_builtins).run()` -> the returned Variable, with
`.builder` (the SIRBuilder holding the recorded tensor work), `.inputs` (tensor inputs in SIR
order, each with a reloadable Tracker) and `.guards()`; `Unsupported(opname, where, detail)` when
the frame uses something not simulated yet; `FrameRaises` when it raises an exception of its own.
Calls of Python functions are inlined by `OpcodeInlineExecutor`. Variables, Trackers, the handler
families (`wrapping`, `names`, `operators`, `iteration`, `building`, attribute lookups in `attributes`,
call dispatch in `calls`, `with` blocks and the grad-mode API in `contexts`), builtins and argument
binding are in their own modules.
"""
from .dispatch import HANDLERS, FrameRaises, Unsupported
from .executor import OpcodeExecutor, OpcodeInlineExecutor
from .trackers import (BuiltinTracker, ConstTracker, DummyTracker, GetAttrTracker, GetItemTracker, GlobalTracker,
                       LocalTracker, Tracker)
from .variables import (NULL, BoundMethodVariable, CellVariable, ConstantVariable, ContainerMethodVariable,
                        DictVariable, FunctionVariable, InstanceVariable, IteratorVariable, ListVariable,
                        ObjectVariable, SuperVariable, TensorMethodVariable, TensorVariable, TupleVariable, Variable)

__all__ = ["OpcodeExecutor", "OpcodeInlineExecutor", "Unsupported", "FrameRaises", "HANDLERS", "Tracker", "LocalTracker", "GlobalTracker",
           "BuiltinTracker", "ConstTracker", "GetAttrTracker", "GetItemTracker", "DummyTracker", "Variable",
           "ConstantVariable", "TensorVariable", "TupleVariable", "ListVariable", "DictVariable", "IteratorVariable",
           "ObjectVariable", "FunctionVariable", "BoundMethodVariable", "CellVariable", "InstanceVariable",
           "SuperVariable", "TensorMethodVariable", "ContainerMethodVariable", "NULL"]
