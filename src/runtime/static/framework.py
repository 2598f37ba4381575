"""The static graph description: Program -> Block -> Variable / Operator.

A Program holds no arrays and no kernels (as Paddle's ProgramDesc): a Variable is a name with a
shape (-1 for an unknown dim), a dtype and flags; an Operator names a registry op, its input
and output variables and its attributes. Ops are appended by the SAME public API as eager
mode: in a thread in static mode an op call goes to `append_op_from_call`, which runs the op's
meta function (so a shape error is raised at build time, naming the op and the user's line) and
records the op instead of computing it. The default programs are shared by all threads, as
Paddle's are; `program_guard` switches them for its own thread only.
"""
from __future__ import annotations

import contextlib
import copy
import hashlib
import itertools
import os
import sys
import threading
from typing import Any, Iterator

import numpy as np

from .. import dtypes as _dt
from ..ops.creation import assign
from ..ops.registry import TensorSpec, get_op
from ..tensor import Tensor

__all__ = ["Program", "Block", "Variable", "Operator", "program_guard", "default_main_program",
           "default_startup_program", "unique_name", "var_names", "CONTROL_FLOW_OPS"]

# Ops that run sub-blocks (control_flow.py) rather than a registry kernel.
CONTROL_FLOW_OPS = frozenset({"cond", "while", "while_grad"})

_RUNTIME_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# ---------------------------------------------------------------- names
class _UniqueNames:
    """Paddle's unique_name.generate: '<key>_<n>' with one counter per key."""

    def __init__(self) -> None:
        self._counters: dict[str, itertools.count] = {}

    def __call__(self, key: str) -> str:
        counter = self._counters.setdefault(key, itertools.count())
        return f"{key}_{next(counter)}"


unique_name = _UniqueNames()


def _user_callsite() -> str:
    """file:line of the first frame outside `runtime` (where the user appended the op)."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_RUNTIME_DIR):
        frame = frame.f_back
    return "<unknown>" if frame is None else f"{frame.f_code.co_filename}:{frame.f_lineno}"


# ---------------------------------------------------------------- Variable
class Variable(Tensor):
    """A named, typed slot of a Block; computing on it appends ops (it never holds values)."""

    __slots__ = ("block", "_shape", "_np_dtype", "is_parameter", "need_check_feed", "initializer",
                 "trainable_flag", "optimize_attr", "regularizer", "need_clip", "const")

    def __init__(self, block: "Block", name: str, shape: tuple[int, ...], dtype: np.dtype,
                 persistable: bool = False, stop_gradient: bool = True, is_parameter: bool = False,
                 need_check_feed: bool = False):
        self._init(None, stop_gradient)
        self._name = name
        self.block = block
        self._shape = tuple(int(d) for d in shape)
        self._np_dtype = np.dtype(dtype)
        self.persistable = persistable
        self.is_parameter = is_parameter
        self.need_check_feed = need_check_feed
        self.initializer = None
        self.trainable_flag = not stop_gradient
        # what a parameter carries for optimizers, as eager Parameters do
        self.optimize_attr = {"learning_rate": 1.0}
        self.regularizer = None
        self.need_clip = True
        # the value, where it is known at build time (the shape of a Variable whose dims are all known,
        # and pure ops of such values: see builder.fold_constants); None for every other Variable
        self.const: np.ndarray | None = None

    @property
    def shape(self) -> list[int]:
        return list(self._shape)

    @property
    def dtype(self) -> _dt.dtype:
        return _dt.from_np_dtype(self._np_dtype)

    @property
    def ndim(self) -> int:
        return len(self._shape)

    @property
    def size(self) -> int:
        return -1 if -1 in self._shape else int(np.prod(self._shape, dtype=np.int64))

    @property
    def trainable(self) -> bool:
        return not self.stop_gradient

    def dim(self) -> int:
        return len(self._shape)

    ndimension = dim

    @property
    def place(self):
        raise TypeError(f"static Variable '{self.name}' has no place; its values live in a Scope")

    def spec(self) -> TensorSpec:
        return TensorSpec(self._shape, self._np_dtype)

    def _no_value(self, what: str):
        raise TypeError(f"{what}: static Variable '{self.name}' has no value at build time; "
                        "fetch it with Executor.run(program, feed=..., fetch_list=[...])")

    def _known(self, what: str) -> np.ndarray:
        if self.const is None:
            self._no_value(what)
        return self.const

    def numpy(self):
        return self._known("numpy").copy()

    def item(self, *args):
        return self._known("item").item(*args)

    def tolist(self):
        return self._known("tolist").tolist()

    def __bool__(self) -> bool:
        return bool(self._known("bool"))

    def __len__(self) -> int:
        if not self._shape or self._shape[0] < 0:
            raise TypeError(f"len() of static Variable '{self.name}' with shape {self.shape} is unknown")
        return self._shape[0]

    def detach(self) -> "Variable":
        """A copy (an `assign` op) with stop_gradient=True: gradients do not flow back through it."""
        out = assign(self)
        out.stop_gradient = True
        return out

    def set_value(self, value: Any) -> None:
        """Record a write of `value` into this var (an `assign` op), e.g. running statistics."""
        from .builder import _as_var  # noqa: PLC0415 - a cycle: builder imports framework for Variable
        src = _as_var(value if isinstance(value, Tensor) else Tensor(np.asarray(value, self._np_dtype)))
        if tuple(src._shape) != self._shape:
            raise ValueError(f"set_value: expected a value of shape {self.shape} for '{self.name}', "
                             f"got {src.shape}")
        default_main_program().current_block().append_op("assign", [src.name], [self.name], {})

    def backward(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("backward: in static mode use paddle.static.append_backward(loss) "
                        "or optimizer.minimize(loss)")

    def __deepcopy__(self, memo: dict) -> "Variable":
        return self  # a Variable is identified by its name in its block

    def __repr__(self) -> str:
        kind = "persist " if self.persistable else ""
        return (f"{kind}var {self.name} : shape({', '.join(map(str, self._shape))}) "
                f"dtype({self._np_dtype.name}) stop_gradient({self.stop_gradient})")

    __str__ = __repr__


def var_names(items: Any, api: str, arg: str) -> list[str]:
    """Names from Variables or names (as fetch lists and no-grad sets accept); None gives []."""
    names = []
    for item in items or ():
        if isinstance(item, Variable):
            names.append(item.name)
        elif isinstance(item, str):
            names.append(item)
        else:
            raise TypeError(f"{api}: argument '{arg}' must hold Variables or var names, got {type(item).__name__}")
    return names


# ---------------------------------------------------------------- Operator
class Operator:
    """One recorded op: registry name, input/output var names (positional) and attributes."""

    __slots__ = ("block", "type", "inputs", "outputs", "attrs", "callsite")

    def __init__(self, block: "Block", type: str, inputs: list[str | None], outputs: list[str],
                 attrs: dict[str, Any], callsite: str = "<unknown>"):
        self.block = block
        self.type = type
        self.inputs = list(inputs)
        self.outputs = list(outputs)
        self.attrs = dict(attrs)
        self.callsite = callsite

    @property
    def opdef(self):
        if self.type in CONTROL_FLOW_OPS:
            from .control_flow import control_flow_def  # noqa: PLC0415 - a cycle: control_flow imports framework
            return control_flow_def(self)
        return get_op(self.type)

    @property
    def input_arg_names(self) -> list[str]:
        return [n for n in self.inputs if n is not None]

    @property
    def output_arg_names(self) -> list[str]:
        return list(self.outputs)

    def written(self) -> set[str]:
        """The vars the op writes: its outputs, and its inputs when its kernel updates them in place."""
        return {*self.outputs, *self.input_arg_names} if self.opdef.inplace else set(self.outputs)

    def attr(self, name: str) -> Any:
        return self.attrs[name]

    def __repr__(self) -> str:
        attrs = ", ".join(f"{k}={_attr_text(v)}" for k, v in sorted(self.attrs.items()))
        ins = ", ".join("None" if n is None else n for n in self.inputs)
        return f"{{{', '.join(self.outputs)}}} = {self.type}(inputs={{{ins}}}{', ' + attrs if attrs else ''})"

    __str__ = __repr__


def _attr_text(v: Any) -> str:
    """A stable text form of an attribute (used by printing and by the program hash)."""
    if isinstance(v, np.dtype):
        return f"dtype({v.name})"
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, (list, tuple)):
        inner = ", ".join(_attr_text(x) for x in v)
        return f"[{inner}]" if isinstance(v, list) else f"({inner})"
    return repr(v)


# ---------------------------------------------------------------- Block
class Block:
    """Ops in order plus an ordered name -> Variable map (block 0 is the global block)."""

    def __init__(self, program: "Program", idx: int, parent_idx: int = -1):
        self.program = program
        self.idx = idx
        self.parent_idx = parent_idx
        self.vars: dict[str, Variable] = {}
        self.ops: list[Operator] = []

    def create_var(self, name: str | None = None, shape: Any = (), dtype: Any = "float32",
                   persistable: bool = False, stop_gradient: bool = True, is_parameter: bool = False,
                   need_check_feed: bool = False) -> Variable:
        """A new var (or, for a persistable name already present, that var)."""
        name = unique_name("_generated_var") if name is None else name
        existing = self.vars.get(name)
        if existing is not None:
            if existing.persistable and persistable:
                return existing
            raise ValueError(f"create_var: a variable named '{name}' already exists in block {self.idx}")
        var = Variable(self, name, tuple(shape), _dt.to_np_dtype(dtype), persistable, stop_gradient,
                       is_parameter, need_check_feed)
        self.vars[name] = var
        self.program._changed()
        return var

    def create_parameter(self, name: str, shape: Any, dtype: Any, trainable: bool = True) -> Variable:
        """A persistable parameter var (trainable ones get gradients)."""
        return self.create_var(name, shape, dtype, persistable=True, stop_gradient=not trainable,
                               is_parameter=True)

    def var(self, name: str) -> Variable:
        """The var named `name`, looked up in this block then its ancestors."""
        block: Block | None = self
        while block is not None:
            if name in block.vars:
                return block.vars[name]
            block = block.program.blocks[block.parent_idx] if block.parent_idx >= 0 else None
        raise ValueError(f"var '{name}' is not in block {self.idx} of the program (nor its parents)")

    def has_var(self, name: str) -> bool:
        try:
            self.var(name)
        except ValueError:
            return False
        return True

    def append_op(self, type: str, inputs: list[str | None], outputs: list[str],
                  attrs: dict[str, Any] | None = None, callsite: str | None = None) -> Operator:
        """Record an op (its vars must already exist in this block or a parent)."""
        for n in [*inputs, *outputs]:
            if n is not None and not self.has_var(n):
                raise ValueError(f"append_op: op '{type}' names var '{n}', which is not in block {self.idx}")
        if type not in CONTROL_FLOW_OPS:
            get_op(type)  # unknown op types fail here, not at run time
        for n in outputs:  # an op writing a var already built: its value is no longer the one known
            self.var(n).const = None
        op = Operator(self, type, inputs, outputs, attrs or {}, callsite or _user_callsite())
        self.ops.append(op)
        self.program._changed()
        return op

    def _remove_op(self, index: int) -> None:
        del self.ops[index]
        self.program._changed()

    def all_parameters(self) -> list[Variable]:
        return [v for v in self.vars.values() if v.is_parameter]

    def __repr__(self) -> str:
        lines = [f"{{ // block {self.idx}"]
        lines += [f"    {v!r}" for v in self.vars.values()]
        lines += [f"    {op!r}" for op in self.ops]
        return "\n".join(lines + ["}"])


# ---------------------------------------------------------------- Program
class Program:
    """A static program: blocks of vars and ops, printable, cloneable, hashable by structure."""

    def __init__(self) -> None:
        self.blocks: list[Block] = [Block(self, 0)]
        self._current_block_idx = 0
        self.random_seed = 0
        self._version = 0
        self._hash: tuple[int, str] | None = None

    def _changed(self) -> None:
        self._version += 1

    def global_block(self) -> Block:
        return self.blocks[0]

    def current_block(self) -> Block:
        return self.blocks[self._current_block_idx]

    def block(self, index: int) -> Block:
        return self.blocks[index]

    @property
    def num_blocks(self) -> int:
        return len(self.blocks)

    def list_vars(self) -> Iterator[Variable]:
        for b in self.blocks:
            yield from b.vars.values()

    def all_parameters(self) -> list[Variable]:
        return [p for b in self.blocks for p in b.all_parameters()]

    def clone(self, for_test: bool = False) -> "Program":
        """A structural copy (vars and ops, no values); for_test switches ops to inference."""
        new = Program.__new__(Program)
        new.random_seed = self.random_seed
        new._current_block_idx = 0
        new._version = 0
        new._hash = None
        new.blocks = []
        for b in self.blocks:
            nb = Block(new, b.idx, b.parent_idx)
            for name, v in b.vars.items():
                nv = Variable(nb, name, v._shape, v._np_dtype, v.persistable, v.stop_gradient,
                              v.is_parameter, v.need_check_feed)
                nb.vars[name] = nv
            for op in b.ops:
                kind, inputs, outputs, attrs = (_inference_form(op) if for_test else None) or \
                    (op.type, op.inputs, op.outputs, op.attrs)
                nb.ops.append(Operator(nb, kind, inputs, outputs, copy.deepcopy(attrs), op.callsite))
            new.blocks.append(nb)
        return new

    def to_string(self, throw_on_error: bool = False, with_details: bool = False) -> str:
        return "\n".join(repr(b) for b in self.blocks)

    def __repr__(self) -> str:
        return self.to_string()

    __str__ = __repr__

    def structural_hash(self) -> str:
        """A stable hash of vars (name, shape, dtype, flags) and ops (type, args, attrs), cached."""
        if self._hash is not None and self._hash[0] == self._version:
            return self._hash[1]
        h = hashlib.sha256()
        for b in self.blocks:
            h.update(f"block {b.idx} {b.parent_idx}\n".encode())
            for v in b.vars.values():
                h.update(f"var {v.name} {v._shape} {v._np_dtype.name} {v.persistable} {v.stop_gradient} "
                         f"{v.is_parameter}\n".encode())
            for op in b.ops:
                attrs = ",".join(f"{k}={_attr_text(a)}" for k, a in sorted(op.attrs.items()))
                h.update(f"op {op.type} {op.inputs} {op.outputs} {attrs}\n".encode())
        digest = h.hexdigest()
        self._hash = (self._version, digest)
        return digest


def _inference_form(op: Operator) -> tuple[str, list, list, dict] | None:
    """What a training-only op becomes in `clone(for_test=True)` (Paddle's is_test): dropout
    keeps x (upscale_in_train) or scales it by 1 - p (downscale_in_infer); alpha_dropout keeps x.
    Their mask outputs are no longer written (only gradient ops read them)."""
    if op.type == "dropout" and op.attrs["mode"] == "downscale_in_infer":
        return "scale", op.inputs[:1], op.outputs[:1], {"scale": 1.0 - op.attrs["p"], "bias": 0.0,
                                                        "bias_after_scale": True}
    if op.type in ("dropout", "alpha_dropout"):
        return "assign", op.inputs[:1], op.outputs[:1], {}
    return None


# ---------------------------------------------------------------- default programs and guards
_DEFAULT_MAIN = Program()
_DEFAULT_STARTUP = Program()


class _Guarded(threading.local):
    """This thread's `program_guard` programs (None: the process-wide defaults)."""

    main: Program | None = None
    startup: Program | None = None


_guarded = _Guarded()


def default_main_program() -> Program:
    """The program ops are appended to (switched by program_guard, per thread)."""
    main = _guarded.main
    return _DEFAULT_MAIN if main is None else main


def default_startup_program() -> Program:
    """The program parameter initialisers are appended to (switched by program_guard, per thread)."""
    startup = _guarded.startup
    return _DEFAULT_STARTUP if startup is None else startup


@contextlib.contextmanager
def program_guard(main_program: Program, startup_program: Program | None = None):
    """Append to `main_program` (and initialise parameters in `startup_program`) inside the block."""
    if not isinstance(main_program, Program):
        raise TypeError(f"program_guard: argument 'main_program' must be a Program, "
                        f"got {type(main_program).__name__}")
    if startup_program is not None and not isinstance(startup_program, Program):
        raise TypeError(f"program_guard: argument 'startup_program' must be a Program, "
                        f"got {type(startup_program).__name__}")
    prev = (_guarded.main, _guarded.startup)
    _guarded.main = main_program
    if startup_program is not None:
        _guarded.startup = startup_program
    try:
        yield
    finally:
        _guarded.main, _guarded.startup = prev
