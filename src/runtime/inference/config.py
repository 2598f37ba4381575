"""`paddle.inference.Config`: which model files a Predictor loads, and on which place it runs.

`Config(model_dir)` names a folder holding one exported model (`inference.pdmodel` /
`inference.pdiparams`, or the only `<name>.pdmodel` there with its `<name>.pdiparams`);
`Config(prog_file, params_file)` names the two files. The switches Paddle's predictor uses only
for speed (IR optimisation passes, oneDNN kernels, memory reuse, math library threads, glog
output) are accepted and recorded, so deployment code runs unchanged, and they change nothing:
the executor always runs the program as saved. `enable_use_gpu` runs on the GPU where runtime has
one (`runtime.place`: CuPy and a device); elsewhere it warns and the predictor stays on the CPU,
as Paddle's CPU build does.
"""
from __future__ import annotations

import glob
import os
import warnings
from typing import Any

from .. import place as _place
from .enums import PrecisionType

__all__ = ["Config"]

_MODEL_SUFFIX = ".pdmodel"
_PARAMS_SUFFIX = ".pdiparams"


class Config:
    """Where the model is and how a Predictor runs it: `Config()`, `Config(model_dir)` or
    `Config(prog_file, params_file)`."""

    def __init__(self, model_dir_or_prog_file: str | None = None, params_file: str | None = None):
        self._model_dir = ""
        self._prog_file = ""
        self._params_file = ""
        self._use_gpu = False
        self._device_id = 0
        self._memory_pool_mb = 0
        self._precision = PrecisionType.Float32
        self._memory_optim = False
        self._ir_optim = True
        self._threads = 1
        self._glog_disabled = False
        self._mkldnn = False
        if model_dir_or_prog_file is not None:
            self.set_model(model_dir_or_prog_file, params_file)

    # ------------------------------------------------------------ model files
    def set_model(self, model_dir_or_prog_file: str, params_file: str | None = None) -> None:
        """`set_model(model_dir)` or `set_model(prog_file, params_file)`."""
        if params_file is None:
            self._model_dir, self._prog_file, self._params_file = os.fspath(model_dir_or_prog_file), "", ""
        else:
            self._model_dir = ""
            self._prog_file, self._params_file = os.fspath(model_dir_or_prog_file), os.fspath(params_file)

    def set_prog_file(self, prog_file: str) -> None:
        self._prog_file = os.fspath(prog_file)

    def set_params_file(self, params_file: str) -> None:
        self._params_file = os.fspath(params_file)

    def model_dir(self) -> str:
        return self._model_dir

    def prog_file(self) -> str:
        return self._prog_file

    def params_file(self) -> str:
        return self._params_file

    def model_files(self) -> tuple[str, str]:
        """(program file, parameters file) this config names; RuntimeError (Paddle's NotFound) when
        they are missing."""
        if self._prog_file:
            files = (self._prog_file, self._params_file)
        elif self._model_dir:
            files = _files_in(self._model_dir)
        else:
            raise RuntimeError("(NotFound) paddle.inference.Config names no model: pass Config(model_dir) or "
                               "Config(prog_file, params_file), or call set_model")
        for path in files:
            if not path or not os.path.isfile(path):
                raise RuntimeError(f"(NotFound) Cannot open file {path!r}, please confirm whether the file is normal.")
        return files

    # ------------------------------------------------------------ place
    def enable_use_gpu(self, memory_pool_init_size_mb: int, device_id: int = 0,
                       precision_mode: PrecisionType = PrecisionType.Float32) -> None:
        """Run on GPU `device_id` where runtime can use one; else warn and stay on the CPU (as Paddle's
        CPU build). The memory pool size is recorded only: CuPy's pool grows as needed."""
        self._memory_pool_mb = int(memory_pool_init_size_mb)
        self._device_id = int(device_id)
        self._precision = PrecisionType(precision_mode)
        if not _place.is_compiled_with_cuda() or not 0 <= device_id < _place.device_count():
            warnings.warn(f"paddle.inference.Config.enable_use_gpu: GPU {device_id} cannot be used here (runtime "
                          "needs CuPy and that device): the predictor runs on the CPU", UserWarning, stacklevel=2)
            return
        if self._precision != PrecisionType.Float32:
            raise ValueError(f"paddle.inference.Config.enable_use_gpu: precision_mode {self._precision.name} is not "
                             "supported (the program runs in the precision it was saved in): use PrecisionType.Float32")
        self._use_gpu = True

    def disable_gpu(self) -> None:
        self._use_gpu = False

    def use_gpu(self) -> bool:
        return self._use_gpu

    def gpu_device_id(self) -> int:
        return self._device_id

    def memory_pool_init_size_mb(self) -> int:
        return self._memory_pool_mb

    def place(self) -> Any:
        """The runtime Place a predictor made from this config runs on."""
        return _place.CUDAPlace(self._device_id) if self._use_gpu else _place.CPUPlace()

    # ------------------------------------------------------------ switches that only change speed in Paddle
    def enable_memory_optim(self, x: bool = True) -> None:
        """Recorded only: the executor already frees each intermediate after its last use."""
        self._memory_optim = bool(x)

    def memory_optim_enabled(self) -> bool:
        return self._memory_optim

    def switch_ir_optim(self, x: bool = True) -> None:
        """Recorded only: Paddle's IR passes fuse ops for speed; the program runs as saved here."""
        self._ir_optim = bool(x)

    def ir_optim(self) -> bool:
        return self._ir_optim

    def set_cpu_math_library_num_threads(self, cpu_math_library_num_threads: int) -> None:
        """Recorded only: NumPy's BLAS picks its own thread count."""
        self._threads = int(cpu_math_library_num_threads)

    def cpu_math_library_num_threads(self) -> int:
        return self._threads

    def disable_glog_info(self) -> None:
        """Recorded only: nothing here logs through glog."""
        self._glog_disabled = True

    def glog_info_disabled(self) -> bool:
        return self._glog_disabled

    def enable_mkldnn(self) -> None:
        """Recorded only: oneDNN kernels only change speed in Paddle; NumPy runs the kernels here."""
        self._mkldnn = True

    def disable_mkldnn(self) -> None:
        self._mkldnn = False

    def mkldnn_enabled(self) -> bool:
        return self._mkldnn

    def switch_use_feed_fetch_ops(self, x: bool = True) -> None:
        """Accepted: handles are always fed and fetched directly."""

    def switch_specify_input_names(self, x: bool = True) -> None:
        """Accepted: inputs are always addressed by name."""

    def summary(self) -> str:
        """The settings as Paddle's two-column table."""
        sections = [
            [("model_dir", self._model_dir)] if self._model_dir else
            [("model_file", self._prog_file), ("params_file", self._params_file)],
            [("cpu_math_thread", self._threads), ("enable_mkldnn", self._mkldnn)],
            [("use_gpu", self._use_gpu)] + ([("gpu_device_id", self._device_id),
                                             ("memory_pool_init_size", f"{self._memory_pool_mb}MB"),
                                             ("gpu_precision", self._precision.name)] if self._use_gpu else []),
            [("ir_optim", self._ir_optim), ("memory_optim", self._memory_optim),
             ("enable_log", not self._glog_disabled)],
        ]
        rows = [[(k, str(v).lower() if isinstance(v, bool) else str(v)) for k, v in s] for s in sections]
        left = max(len("Option"), *(len(k) for s in rows for k, _ in s)) + 2
        right = max(len("Value"), *(len(v) for s in rows for _, v in s)) + 2
        rule = f"+{'-' * left}+{'-' * right}+"
        lines = ["", rule, f"| {'Option':<{left - 1}}| {'Value':<{right - 1}}|", rule]
        for s in rows:
            lines += [f"| {k:<{left - 1}}| {v:<{right - 1}}|" for k, v in s] + [rule]
        return "\n".join(lines) + "\n"


def _files_in(model_dir: str) -> tuple[str, str]:
    """The model of a folder: `inference.*` first, else the only `<name>.pdmodel` there."""
    if not os.path.isdir(model_dir):
        raise RuntimeError(f"(NotFound) Cannot open model directory {model_dir!r}, please confirm it exists.")
    prefix = os.path.join(model_dir, "inference")
    if not os.path.isfile(prefix + _MODEL_SUFFIX):
        found = sorted(glob.glob(os.path.join(glob.escape(model_dir), "*" + _MODEL_SUFFIX)))
        if len(found) != 1:
            raise RuntimeError(f"(NotFound) paddle.inference.Config: model directory {model_dir!r} holds "
                               f"{len(found)} '*{_MODEL_SUFFIX}' files and no 'inference{_MODEL_SUFFIX}': name the "
                               "files with Config(prog_file, params_file)")
        prefix = found[0][:-len(_MODEL_SUFFIX)]
    return prefix + _MODEL_SUFFIX, prefix + _PARAMS_SUFFIX
