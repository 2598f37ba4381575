"""Inference models: `save_inference_model` / `load_inference_model`.

A saved model is two files: `<path_prefix>.pdmodel`, the program (cloned for test and pruned
to the ops the fetch targets need) as JSON, and `<path_prefix>.pdiparams`, the values of its
persistable vars as an `.npz` archive. Nothing is pickled: attributes are encoded explicitly
(tuples, NumPy dtypes and scalars, Ellipsis, non-finite floats each get a tagged object), and
arrays are read back with `allow_pickle=False`, so loading a file never runs code from it.
"""
from __future__ import annotations

import json
import math
import os
from typing import Any

import numpy as np

from ..executor.scope import global_scope
from .framework import CONTROL_FLOW_OPS, Block, Operator, Program, Variable, default_main_program

__all__ = ["save_inference_model", "load_inference_model", "read_inference_files", "program_to_dict",
           "program_from_dict"]

_FORMAT = "runtime.static.inference_model"
_VERSION = 1
_MODEL_SUFFIX = ".pdmodel"
_PARAMS_SUFFIX = ".pdiparams"


# ---------------------------------------------------------------- attribute encoding
def _encode(value: Any, where: str) -> Any:
    """A JSON value for an op attribute (tagged objects for what JSON lacks)."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int) and not isinstance(value, np.integer):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"__float__": repr(value)}
    if isinstance(value, complex):
        return {"__complex__": [_encode(value.real, where), _encode(value.imag, where)]}
    if isinstance(value, tuple):
        return {"__tuple__": [_encode(v, where) for v in value]}
    if isinstance(value, list):
        return [_encode(v, where) for v in value]
    if isinstance(value, np.dtype):
        return {"__dtype__": value.str if value.names is None else _unsupported(value, where)}
    if isinstance(value, np.generic):
        return {"__npscalar__": np.dtype(type(value)).str, "value": _encode(value.item(), where)}
    if value is Ellipsis:
        return {"__ellipsis__": True}
    return _unsupported(value, where)


def _unsupported(value: Any, where: str):
    raise TypeError(f"save_inference_model: {where} has a value of type {type(value).__name__} "
                    f"({value!r}), which cannot be saved")


def _decode(value: Any) -> Any:
    if isinstance(value, list):
        return [_decode(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "__tuple__" in value:
        return tuple(_decode(v) for v in value["__tuple__"])
    if "__dtype__" in value:
        return np.dtype(value["__dtype__"])
    if "__float__" in value:
        return float(value["__float__"])
    if "__complex__" in value:
        re, im = (_decode(v) for v in value["__complex__"])
        return complex(re, im)
    if "__npscalar__" in value:
        return np.dtype(value["__npscalar__"]).type(_decode(value["value"]))
    if "__ellipsis__" in value:
        return Ellipsis
    raise ValueError(f"load_inference_model: unknown attribute encoding {sorted(value)}")


# ---------------------------------------------------------------- program <-> dict
def program_to_dict(program: Program) -> dict:
    """A JSON-ready description of `program` (vars, ops, attributes), holding no arrays."""
    blocks = []
    for b in program.blocks:
        vars_ = [{"name": v.name, "shape": list(v._shape), "dtype": v._np_dtype.str,
                  "persistable": v.persistable, "stop_gradient": v.stop_gradient,
                  "is_parameter": v.is_parameter, "need_check_feed": v.need_check_feed}
                 for v in b.vars.values()]
        ops = [{"type": op.type, "inputs": list(op.inputs), "outputs": list(op.outputs),
                "attrs": {k: _encode(a, f"attribute '{k}' of op '{op.type}'") for k, a in op.attrs.items()},
                "callsite": op.callsite}
               for op in b.ops]
        blocks.append({"idx": b.idx, "parent_idx": b.parent_idx, "vars": vars_, "ops": ops})
    return {"format": _FORMAT, "version": _VERSION, "random_seed": program.random_seed, "blocks": blocks}


def program_from_dict(desc: dict) -> Program:
    """The Program `program_to_dict` described."""
    if desc.get("format") != _FORMAT or desc.get("version") != _VERSION:
        raise ValueError(f"load_inference_model: not a saved program of format {_FORMAT!r} version {_VERSION} "
                         f"(got {desc.get('format')!r} version {desc.get('version')!r})")
    program = Program()
    program.blocks = []
    program.random_seed = desc.get("random_seed", 0)
    for bd in desc["blocks"]:
        block = Block(program, bd["idx"], bd["parent_idx"])
        program.blocks.append(block)
        for vd in bd["vars"]:
            block.vars[vd["name"]] = Variable(block, vd["name"], tuple(vd["shape"]), np.dtype(vd["dtype"]),
                                              vd["persistable"], vd["stop_gradient"], vd["is_parameter"],
                                              vd["need_check_feed"])
    for bd, block in zip(desc["blocks"], program.blocks):
        for od in bd["ops"]:
            block.append_op(od["type"], od["inputs"], od["outputs"],
                            {k: _decode(a) for k, a in od["attrs"].items()}, od["callsite"])
    program._changed()
    return program


# ---------------------------------------------------------------- pruning
def _pruned(program: Program, feed_names: list[str], fetch_names: list[str]) -> Program:
    """A copy of the global block keeping only the ops the fetches need (feeds are inputs)."""
    block = program.global_block()
    needed = set(fetch_names)
    keep = []
    for op in reversed(block.ops):
        if needed.intersection(op.outputs) and not set(op.outputs) <= set(feed_names):
            keep.append(op)
            needed.difference_update(op.outputs)
            needed.update(op.input_arg_names)
    keep.reverse()
    missing = [n for n in needed if n not in feed_names and not block.var(n).persistable]
    if missing:
        raise ValueError(f"save_inference_model: the fetch targets need var(s) {sorted(missing)}, which are "
                         "neither fed (feed_vars) nor computed by the program")
    used = set(feed_names) | set(fetch_names)
    for op in keep:
        used.update(op.input_arg_names)
        used.update(op.outputs)
    new = Program()
    nb = new.global_block()
    for name, v in block.vars.items():
        if name in used:
            nb.vars[name] = Variable(nb, name, v._shape, v._np_dtype, v.persistable, v.stop_gradient,
                                     v.is_parameter, v.need_check_feed or name in feed_names)
    for op in keep:
        nb.ops.append(Operator(nb, op.type, op.inputs, op.outputs, dict(op.attrs), op.callsite))
    if any(op.type in CONTROL_FLOW_OPS for op in keep):   # their sub-blocks, at the same indices
        for b in program.clone().blocks[1:]:
            b.program = new
            new.blocks.append(b)
    new.random_seed = program.random_seed
    new._changed()
    return new


def _var_names(items: Any, api: str, arg: str, program: Program) -> list[str]:
    seq = [items] if isinstance(items, (Variable, str)) else list(items)
    if not seq:
        raise ValueError(f"{api}: '{arg}' must not be empty")
    names = []
    for i, v in enumerate(seq):
        if not isinstance(v, (Variable, str)):
            raise TypeError(f"{api}: {arg}[{i}] must be a static Variable or a var name, got {type(v).__name__}")
        name = v if isinstance(v, str) else v.name
        if name not in program.global_block().vars:
            raise ValueError(f"{api}: {arg}[{i}] ('{name}') is not a variable of the program")
        names.append(name)
    return names


def _check_prefix(api: str, path_prefix: Any) -> str:
    if not isinstance(path_prefix, (str, os.PathLike)):
        raise TypeError(f"{api}: 'path_prefix' must be a str, got {type(path_prefix).__name__}")
    path_prefix = os.fspath(path_prefix)
    if not path_prefix or path_prefix.endswith(("/", os.sep)) or os.path.isdir(path_prefix):
        raise ValueError(f"{api}: 'path_prefix' must be a file name prefix like 'dir/model', got {path_prefix!r}")
    return path_prefix


# ---------------------------------------------------------------- save / load
def save_inference_model(path_prefix: str, feed_vars: Any, fetch_vars: Any, executor: Any,
                         program: Program | None = None, **kwargs: Any) -> None:
    """Save the part of `program` that computes `fetch_vars` from `feed_vars`, and its parameters."""
    api = "save_inference_model"
    path_prefix = _check_prefix(api, path_prefix)
    program = default_main_program() if program is None else program
    if not isinstance(program, Program):
        raise TypeError(f"{api}: 'program' must be a Program, got {type(program).__name__}")
    feed_names = _var_names(feed_vars, api, "feed_vars", program)
    fetch_names = _var_names(fetch_vars, api, "fetch_vars", program)
    pruned = _pruned(program.clone(for_test=True), feed_names, fetch_names)
    scope = global_scope()
    params = {}
    for v in pruned.global_block().vars.values():
        if v.persistable:
            found = scope.find_var(v.name)
            if found is None:
                raise ValueError(f"{api}: persistable var '{v.name}' has no value in the global scope "
                                 "(run the startup program first)")
            params[v.name] = np.asarray(found.get_tensor())
    desc = program_to_dict(pruned)
    desc["feed"], desc["fetch"] = feed_names, fetch_names
    os.makedirs(os.path.dirname(os.path.abspath(path_prefix)), exist_ok=True)
    with open(path_prefix + _MODEL_SUFFIX, "w", encoding="utf-8") as f:
        json.dump(desc, f, allow_nan=False)
    with open(path_prefix + _PARAMS_SUFFIX, "wb") as f:
        np.savez(f, **params)


def load_inference_model(path_prefix: str, executor: Any, **kwargs: Any) -> list:
    """[program, feed_target_names, fetch_targets]; the parameters go into the global scope."""
    api = "load_inference_model"
    path_prefix = _check_prefix(api, path_prefix)
    for suffix in (_MODEL_SUFFIX, _PARAMS_SUFFIX):
        if not os.path.isfile(path_prefix + suffix):
            raise ValueError(f"{api}: no file '{path_prefix + suffix}' (saved by save_inference_model)")
    program, feed_names, fetch_names, values = read_inference_files(
        path_prefix + _MODEL_SUFFIX, path_prefix + _PARAMS_SUFFIX, api)
    scope = global_scope()
    for name, value in values.items():
        scope.var(name).set(value)
    block = program.global_block()
    return [program, feed_names, [block.var(n) for n in fetch_names]]


def read_inference_files(model_file: str, params_file: str, api: str) -> tuple[Program, list[str], list[str], dict]:
    """(program, feed names, fetch names, persistable var name -> saved array) of a model saved by
    `save_inference_model` as these two files (any names: paddle.inference's Config takes them apart).
    A model exported by PaddlePaddle itself (protobuf `.pdmodel`, PIR `.json`) is refused by name."""
    try:
        with open(model_file, encoding="utf-8") as f:
            desc = json.load(f)
    except (UnicodeDecodeError, json.JSONDecodeError):
        desc = None
    if not isinstance(desc, dict) or "format" not in desc:   # not ours at all (another format is named below)
        raise ValueError(f"{api}: '{model_file}' is not a model saved by this project's paddle.jit.save or "
                         "paddle.static.save_inference_model. Models exported by PaddlePaddle itself (protobuf "
                         "'.pdmodel' or PIR '.json' files) cannot be read: export the model again with "
                         "runtime's paddle.jit.save")
    program = program_from_dict(desc)
    block = program.global_block()
    with np.load(params_file, allow_pickle=False) as arrays:
        values = {name: arrays[name] for name in arrays.files}
    persistable = [v for v in block.vars.values() if v.persistable]
    for v in persistable:
        if v.name not in values:
            raise ValueError(f"{api}: '{params_file}' has no value for persistable var '{v.name}'")
        if tuple(values[v.name].shape) != v._shape or values[v.name].dtype != v._np_dtype:
            raise ValueError(f"{api}: the saved value of '{v.name}' has shape {list(values[v.name].shape)} and "
                             f"dtype {values[v.name].dtype}, expected {list(v._shape)} and {v._np_dtype}")
    return program, list(desc["feed"]), list(desc["fetch"]), {v.name: values[v.name] for v in persistable}
