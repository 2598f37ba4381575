"""sot.opcode_executor: simulating a frame's bytecode on Variables that know where they came from.

`OpcodeExecutor(code, f_locals, f_globals, f_builtins).run()` -> the returned Variable, with
`.builder` (the SIRBuilder holding the recorded tensor work), `.inputs` (tensor inputs in SIR
order, each with a reloadable Tracker) and `.guards()`; `Unsupported(opname, where, detail)` when
the frame uses something not simulated yet. Variables and Trackers are in their own modules.
"""
from .executor import HANDLERS, OpcodeExecutor, Unsupported
from .trackers import (BuiltinTracker, ConstTracker, DummyTracker, GetAttrTracker, GetItemTracker, GlobalTracker,
                       LocalTracker, Tracker)
from .variables import (NULL, ConstantVariable, ContainerMethodVariable, DictVariable, IteratorVariable, ListVariable,
                        ObjectVariable, TensorMethodVariable, TensorVariable, TupleVariable, Variable)

__all__ = ["OpcodeExecutor", "Unsupported", "HANDLERS", "Tracker", "LocalTracker", "GlobalTracker",
           "BuiltinTracker", "ConstTracker", "GetAttrTracker", "GetItemTracker", "DummyTracker", "Variable",
           "ConstantVariable", "TensorVariable", "TupleVariable", "ListVariable", "DictVariable", "IteratorVariable",
           "ObjectVariable", "TensorMethodVariable", "ContainerMethodVariable", "NULL"]
