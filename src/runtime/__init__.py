"""runtime: an eager tensor framework with the PaddlePaddle 2.x API, on NumPy (CPU) and CuPy (GPU).

`import runtime as paddle` runs Paddle 2.x model code: tensors, autograd, layers,
optimizers, data loading and save/load.

Layers, lowest first. A module imports only its own layer or lower ones at module level
(tests/test_import_graph.py checks it); a call upwards is a function-local import whose comment
names the layer above. `dtypes`, `place`, `flags` and `generator` are leaves. `tensor` holds the
Tensor data structure and imports no op: the layers above bind its computing methods onto it
(`tensor_method`, the operator table in `ops.operators`, `backward` from the autograd engine).
`ops` is the registry, eager dispatch and every op family; dispatch records the autograd tape as
it runs, so the tape (`ops.tape`) and the grad mode it reads (`ops.grad_mode`) belong to this
layer. `autograd` builds on the ops: the backward engine walks the tape and runs the gradient
rules, which are ops; `paddle.no_grad` and friends are re-exported from it. Then `nn`; then
`executor`, which runs programs it reads through its own Protocols; then `static`, which builds
them and installs itself into the layers below through hooks. `optimizer` sits on `nn`, and its
static-mode half (`optimizer.static_mode`) is imported when a static program first needs it.
`jit` sits on top: `paddle.jit.to_static` runs on whichever JIT registered itself with it (runtime
never imports one), and `paddle.jit.save`/`load` export a Layer through `static`.
"""
from . import device, io, jit, linalg, nn, optimizer, regularizer, static, utils  # noqa: F401
from . import base, distributed, incubate, metric, tensor_api  # noqa: F401
from . import vision  # noqa: F401
from . import distribution  # noqa: F401
from . import callbacks, hapi  # noqa: F401
from .hapi import Model, flops, summary
from . import inference  # noqa: F401
from . import profiler  # noqa: F401
from . import fft, signal  # noqa: F401
from . import amp  # noqa: F401
from .autograd import enable_grad, grad, is_grad_enabled, no_grad, set_grad_enabled
from .distributed import DataParallel
from .dtypes import (bool, complex64, complex128, dtype, float16, float32, float64, get_default_dtype,
                     int8, int16, int32, int64, is_complex, is_floating_point, is_integer,
                     set_default_dtype, uint8)
from .flags import get_flags, set_flags
from .mode import in_dynamic_mode
from .generator import *  # noqa: F401,F403
from .ops.complex import *  # noqa: F401,F403
from .ops.creation import *  # noqa: F401,F403
from .ops.gather import *  # noqa: F401,F403
from .ops.indexing import *  # noqa: F401,F403
from .ops.linalg import *  # noqa: F401,F403
from .ops.math import *  # noqa: F401,F403
from .ops.random import *  # noqa: F401,F403
from .ops.reduction import *  # noqa: F401,F403
from .ops.search import *  # noqa: F401,F403
from .ops.shape import *  # noqa: F401,F403
from .ops.special import *  # noqa: F401,F403
from .nn.layer.layers import create_parameter
from .nn.param_attr import ParamAttr
from .parameter import Parameter
from .place import (CPUPlace, CUDAPinnedPlace, CUDAPlace, device_count, get_device,
                    is_compiled_with_cuda, set_device)
from .serialization import *  # noqa: F401,F403
from .static.builder import disable_static, enable_static
from .tensor import Tensor, is_tensor, to_tensor

__version__ = "0.1.0"
