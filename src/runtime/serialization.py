"""paddle.save / paddle.load for state dicts, without unpickling arbitrary objects.

A saved file is one NumPy .npz archive: every array of the object is a member ("a0", "a1",
...), and the member "__manifest__" holds a JSON description of the object's structure (dicts,
lists, tuples, numbers, strings, None, and for each array whether it was a Tensor or a
Parameter, and its name). Loading reads the archive with `allow_pickle=False` and
rebuilds only those types, so a file can never make `load` run code. Loaded tensors are
Tensors with stop_gradient=True, as Paddle returns them. `load` also reads the pickles real
Paddle writes (.pdparams, .pdopt), through the restricted unpickler of `pickle_load`. Anything
else (a truncated or foreign file) is rejected with a ValueError naming the path.
"""
from __future__ import annotations

import io
import json
import os
import tempfile
import zipfile
from typing import Any

import numpy as np

from .parameter import Parameter
from .pickle_load import is_pickle, load_pickle
from .place import current_place, move
from .tensor import Tensor

__all__ = ["save", "load"]

_MANIFEST = "__manifest__"
_FORMAT = "runtime.save"
_VERSION = 1
_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
_SAVE_CONFIGS = {"use_binary_format", "pickle_protocol"}
_LOAD_CONFIGS = {"return_numpy", "model_filename", "params_filename", "keep_name_table"}
_SCALARS = {bool: "bool", int: "int", float: "float", str: "str"}


# ---------------------------------------------------------------- save
def _host(arr) -> np.ndarray:
    return arr if type(arr) is np.ndarray else arr.get()


def _encode(obj: Any, arrays: dict, where: str) -> dict:
    """The JSON node for `obj`; its arrays go into `arrays` (checked: nothing is pickled)."""
    kind = _SCALARS.get(type(obj))
    if kind is not None:
        return {"t": kind, "v": obj}
    if obj is None:
        return {"t": "none"}
    if isinstance(obj, Tensor):
        key = f"a{len(arrays)}"
        arrays[key] = _host(obj._data)
        return {"t": "tensor", "key": key, "kind": "Parameter" if isinstance(obj, Parameter) else "Tensor",
                "name": obj._name}
    if isinstance(obj, (np.ndarray, np.generic)):
        arr = np.asarray(obj)
        if arr.dtype.hasobject or arr.dtype.kind == "V":
            raise TypeError(f"save: the array at {where} has dtype {arr.dtype}, which cannot be saved without pickle")
        key = f"a{len(arrays)}"
        arrays[key] = arr
        return {"t": "ndarray" if isinstance(obj, np.ndarray) else "npscalar", "key": key}
    if isinstance(obj, dict):
        items = []
        for k, v in obj.items():
            if type(k) not in _SCALARS and k is not None:
                raise TypeError(f"save: dict keys must be str, int, float, bool or None; got a key of type "
                                f"{type(k).__name__} at {where}")
            items.append([_encode(k, arrays, where), _encode(v, arrays, f"{where}[{k!r}]")])
        return {"t": "dict", "items": items}
    if isinstance(obj, (list, tuple)):
        return {"t": "tuple" if isinstance(obj, tuple) else "list",
                "items": [_encode(v, arrays, f"{where}[{i}]") for i, v in enumerate(obj)]}
    raise TypeError(f"save: cannot save an object of type {type(obj).__name__} at {where}; supported are "
                    "Tensors, numpy arrays, numbers, strings, None, and dicts/lists/tuples of them")


def _check_configs(api: str, configs: dict, allowed: set) -> None:
    unknown = sorted(set(configs) - allowed)
    if unknown:
        raise ValueError(f"{api}: the configs {unknown} are not supported (supported: {sorted(allowed)})")


def save(obj: Any, path: Any, protocol: int = 4, **configs: Any) -> None:
    """Save a state dict (or any nesting of Tensors, arrays, numbers, strings) to `path` (or a file object)."""
    if isinstance(protocol, bool) or not isinstance(protocol, int):
        raise ValueError(f"save: the 'protocol' MUST be `int`, but received {type(protocol).__name__}")
    if not 1 < protocol < 5:
        raise ValueError(f"save: expected 1 < 'protocol' < 5, but received protocol={protocol}")
    _check_configs("save", configs, _SAVE_CONFIGS)
    arrays: dict[str, np.ndarray] = {}
    tree = _encode(obj, arrays, "obj")
    manifest = json.dumps({"format": _FORMAT, "version": _VERSION, "tree": tree})
    arrays[_MANIFEST] = np.frombuffer(manifest.encode("utf-8"), dtype=np.uint8)
    if hasattr(path, "write"):
        np.savez(path, **arrays)
        return
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"save: 'path' must be a str, a path or a writable file object, got {type(path).__name__}")
    path = os.fspath(path)
    directory, filename = os.path.split(path)
    if not filename:
        raise ValueError(f"save: the path MUST be format of dirname/filename, but received filename is empty "
                         f"string ({path!r})")
    if directory:
        os.makedirs(directory, exist_ok=True)
    # write beside the target, then rename: a failed save never leaves a half-written file
    fd, tmp = tempfile.mkstemp(dir=directory or ".", prefix=f".{filename}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez(f, **arrays)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


# ---------------------------------------------------------------- load
class _Decoder:
    """Rebuilds the object from the manifest tree; any malformed node raises ValueError."""

    def __init__(self, archive, where: str, return_numpy: bool):
        self.archive = archive
        self.where = where
        self.return_numpy = return_numpy

    def bad(self, what: str) -> ValueError:
        return ValueError(f"load: {self.where} is not a valid paddle.save file: {what}")

    def array(self, node: dict) -> np.ndarray:
        key = node.get("key")
        if not isinstance(key, str) or key == _MANIFEST or key not in self.archive.files:
            raise self.bad(f"the manifest refers to a missing array {key!r}")
        try:
            return self.archive[key]
        except (ValueError, OSError, EOFError, zipfile.BadZipFile) as e:
            raise self.bad(f"array {key!r} cannot be read ({e})") from None

    def node(self, node: Any) -> Any:
        if not isinstance(node, dict):
            raise self.bad(f"a manifest node is a {type(node).__name__}, expected an object")
        t = node.get("t")
        if t in ("bool", "int", "float", "str"):
            v = node.get("v")
            ok = {"bool": bool, "int": int, "float": (int, float), "str": str}[t]
            if not isinstance(v, ok) or (t == "int" and isinstance(v, bool)):
                raise self.bad(f"a {t} node holds {v!r}")
            return float(v) if t == "float" else v
        if t == "none":
            return None
        if t == "tensor":
            arr = self.array(node)
            if self.return_numpy:
                return arr
            if node.get("kind") not in ("Tensor", "Parameter"):
                raise self.bad(f"unknown tensor kind {node.get('kind')!r}")
            out = Tensor._wrap(move(arr, current_place()))  # on the default place, stop_gradient=True, as Paddle's
            name = node.get("name")
            if isinstance(name, str):
                out.name = name
            return out
        if t == "ndarray":
            return self.array(node)
        if t == "npscalar":
            arr = self.array(node)
            if arr.ndim != 0:
                raise self.bad("a numpy scalar node holds a non-scalar array")
            return arr[()]
        if t in ("list", "tuple", "dict"):
            items = node.get("items")
            if not isinstance(items, list):
                raise self.bad(f"a {t} node has no item list")
            if t == "dict":
                out = {}
                for pair in items:
                    if not (isinstance(pair, list) and len(pair) == 2):
                        raise self.bad("a dict item is not a [key, value] pair")
                    key = self.node(pair[0])
                    if type(key) not in _SCALARS and key is not None:
                        raise self.bad(f"a dict key is a {type(key).__name__}")
                    out[key] = self.node(pair[1])
                return out
            values = [self.node(v) for v in items]
            return tuple(values) if t == "tuple" else values
        raise self.bad(f"unknown node type {t!r}")


def _read_bytes(path: Any) -> tuple[bytes, str]:
    if hasattr(path, "read"):
        data = path.read()
        return (data if isinstance(data, bytes) else bytes(data)), repr(getattr(path, "name", "<file object>"))
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"load: 'path' must be a str, a path or a readable file object, got {type(path).__name__}")
    where = repr(os.fspath(path))
    if not os.path.isfile(path):
        raise ValueError(f"load: the path {where} to load does not exist or is not a file")
    with open(path, "rb") as f:
        return f.read(), where


def load(path: Any, **configs: Any) -> Any:
    """Load what `save` wrote, or a pickle real Paddle's paddle.save wrote (told apart by content):
    Tensors (or NumPy arrays with return_numpy=True) in the saved structure."""
    _check_configs("load", configs, _LOAD_CONFIGS)
    data, where = _read_bytes(path)
    return_numpy = bool(configs.get("return_numpy", False))
    if is_pickle(data):
        return load_pickle(data, where, return_numpy, bool(configs.get("keep_name_table", False)))
    expected = ("expected a paddle.save file (runtime's .npz archive with a JSON manifest, or a pickle "
                "written by Paddle's paddle.save)")
    if not data.startswith(_ZIP_MAGIC):
        raise ValueError(f"load: {where} is not a paddle.save file: {expected}")
    try:
        archive = np.load(io.BytesIO(data), allow_pickle=False)
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as e:
        raise ValueError(f"load: {where} is not a readable paddle.save file ({e}); {expected}") from None
    with archive:
        if not hasattr(archive, "files") or _MANIFEST not in archive.files:
            raise ValueError(f"load: {where} has no {_MANIFEST!r} entry; {expected}")
        decoder = _Decoder(archive, where, return_numpy)
        try:
            raw = archive[_MANIFEST]
            manifest = json.loads(raw.tobytes().decode("utf-8"))
        except (ValueError, OSError, EOFError, zipfile.BadZipFile, UnicodeDecodeError) as e:
            raise decoder.bad(f"the manifest cannot be read ({e})") from None
        if not isinstance(manifest, dict) or manifest.get("format") != _FORMAT:
            raise decoder.bad(f"the manifest does not describe a {_FORMAT!r} file")
        if manifest.get("version") != _VERSION:
            raise decoder.bad(f"format version {manifest.get('version')!r} is not supported (expected {_VERSION})")
        return decoder.node(manifest.get("tree"))
