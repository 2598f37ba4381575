"""`paddle.jit`: to_static over a registered JIT backend, and save/load of inference layers.

`to_static`, `not_to_static`, `enable_to_static` and `ignore_module` delegate to the JIT that
registered itself (`import sot` does) or that an entry point of the `runtime.jit_backends` group
names (backend.py); `save` / `load` need no JIT: they export a Layer's forward as a static program
(export.py) and run it back as a `TranslatedLayer` (translated_layer.py).
"""
from ..static import InputSpec
from .api import StaticFunction, enable_to_static, ignore_module, not_to_static, to_static
from .backend import ENTRY_POINT_GROUP, JitBackend, current_backend, register_backend
from .export import save
from .translated_layer import TranslatedLayer, load

__all__ = ["to_static", "not_to_static", "enable_to_static", "ignore_module", "save", "load", "TranslatedLayer",
           "InputSpec", "StaticFunction", "JitBackend", "register_backend", "current_backend", "ENTRY_POINT_GROUP"]
