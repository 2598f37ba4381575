"""`Optimizer.minimize` in static mode: gradient, clip, regularisation and update ops.

As Paddle's `minimize`: `append_backward(loss)` gives `params_grads` sorted
by parameter name; then, per parameter group, the gradient-clip ops (the clip classes are
written with public ops, so they record), the regularisation ops, and ONE update op per
parameter (the registry's sgd / momentum / adam / adamw / rmsprop / adagrad / adamax / lamb, whose
kernels update the
parameter and its accumulators in place), in parameter-name order.

The learning rate is a persistable float32 var `learning_rate_<n>` and each accumulator a
persistable var `<param>_<accumulator>_<n>` (moments like the parameter, beta powers of shape
[1]); all are created in the main program and initialised by `full` ops in the startup
program, so running startup again resets them. A per-parameter learning-rate scale appends a
`scale` op. With an `LRScheduler`, the lr var's value lives in the global scope:
`scheduler.step()` (any change of its `last_lr`) writes the new value there, and
`optimizer.set_lr` does the same for a float learning rate.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..executor.scope import global_scope
from ..ops import math as _math
from ..regularizer import L1Decay
from ..static.backward import append_backward
from ..static.framework import Variable, default_startup_program, program_guard, unique_name
from .lr import LRScheduler
from .optimizer import _Group

__all__ = ["minimize_static", "set_lr_var"]

_LR_DTYPE = np.dtype("float32")


def set_lr_var(name: str, value: float) -> None:
    """Write a learning rate into the lr var `name` of the global scope (what the Executor reads)."""
    global_scope().var(name).set(np.array([value], dtype=_LR_DTYPE))


def _persistable(main, startup, name: str, shape: tuple, dtype: np.dtype, fill: float):
    """A persistable var in main, initialised to `fill` by a `full` op in startup."""
    var = main.global_block().create_var(name, shape, dtype, persistable=True)
    sblock = startup.global_block()
    sblock.create_var(name, shape, dtype, persistable=True)
    sblock.append_op("full", [], [name], {"shape": tuple(shape), "fill_value": float(fill), "dtype": dtype})
    return var


def _regularized(reg: Any, param, grad):
    """grad + the decay term of `reg` (L2: coeff * param, L1: coeff * sign(param)), as ops."""
    base = _math.sign(param) if isinstance(reg, L1Decay) else param
    return _math.add(grad, _math.scale(base, reg.coeff))


def minimize_static(opt, loss, startup_program: Any = None, parameters: Any = None,
                    no_grad_set: Any = None) -> tuple[list, list]:
    """Append backward and update ops for `loss`; returns (optimize_ops, params_grads)."""

    api = f"{type(opt).__name__}.minimize"
    if not isinstance(loss, Variable):
        raise TypeError(f"{api}: in static mode 'loss' must be a static Variable, got {type(loss).__name__}")
    main = loss.block.program
    startup = default_startup_program() if startup_program is None else startup_program
    if parameters is not None:
        options = dict(opt._default_dict)
        opt._check_hyper(options)
        groups = [_Group(list(parameters), options, False)]
    elif opt._parameter_list is not None:
        groups = opt._groups
    else:
        options = dict(opt._default_dict)
        opt._check_hyper(options)
        groups = [_Group([p for p in main.global_block().all_parameters() if p.trainable], options, False)]
    group_of = {p.name: g for g in groups for p in g.params}
    params_grads = append_backward(loss, list(group_of), no_grad_set)
    if not params_grads:
        raise ValueError(f"{api}: no trainable parameter of the optimizer receives a gradient from "
                         f"loss '{loss.name}'")
    with program_guard(main, startup):
        updates = {}
        for group in groups:
            pairs = [(p, g) for p, g in params_grads if group_of[p.name] is group]
            clip = group.options.get("grad_clip")
            if clip is not None and pairs:
                pairs = clip(pairs)
            updates.update({p.name: (p, g, group) for p, g in pairs if g is not None})
        lr_value = opt.get_lr()
        lr_var = _persistable(main, startup, unique_name("learning_rate"), (1,), _LR_DTYPE, lr_value)
        if isinstance(opt._learning_rate, LRScheduler):
            opt._learning_rate._var_name = lr_var.name
            main.lr_scheduler = opt._learning_rate
        opt._static_lr_var = lr_var.name
        ops = []
        for name in sorted(updates):
            p, g, group = updates[name]
            reg = opt._regularizer_for(p, group)
            if reg is not None:
                g = _regularized(reg, p, g)
            scale = opt._lr_scale(p, group)
            lr = lr_var if scale == 1.0 else _math.scale(lr_var, scale)
            ops.append(_append_update(opt, main, startup, p, g, lr, group, unique_name))
    return ops, params_grads


def _append_update(opt, main, startup, param, grad, lr, group, unique_name):
    """One update op for `param` (its accumulators created and initialised first)."""
    accs = []
    for acc_name, fill in opt._accumulator_specs:
        shape, dtype, value = opt._accumulator_layout(fill, tuple(param._shape), param._np_dtype, group.options)
        accs.append(_persistable(main, startup, unique_name(f"{param.name}_{acc_name}"), shape, dtype, value))
    op = opt._op
    inputs = [param, grad, lr, *accs]
    _, attrs = opt._op_inputs(param, None, None, tuple(accs), group)
    attrs = {**op.attrs, **attrs}
    op.meta(*(v.spec() for v in inputs), **attrs)  # shape / dtype errors now, naming the op
    return main.global_block().append_op(op.name, [v.name for v in inputs], [param.name] + [a.name for a in accs],
                                         attrs)
