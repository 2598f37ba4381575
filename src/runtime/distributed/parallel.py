"""The process's place in the (one-process) world, and DataParallel as Paddle runs it on one card."""
from __future__ import annotations

from typing import Any

from ..mode import in_dynamic_mode
from ..nn.layer.layers import Layer

__all__ = ["DataParallel", "ParallelEnv", "get_rank", "get_world_size", "init_parallel_env", "is_available",
           "is_initialized"]


def get_rank(group: Any = None) -> int:
    """This process's rank: always 0 (one process)."""
    return 0


def get_world_size(group: Any = None) -> int:
    """The number of processes: always 1."""
    return 1


def init_parallel_env() -> None:
    """Nothing to set up for one process (Paddle does nothing outside a parallel launch either)."""


def is_initialized() -> bool:
    """False: no process group is ever created here, as in Paddle's single-process runs."""
    return False


def is_available() -> bool:
    """True: the distributed package is importable and its one-process API works."""
    return True


class ParallelEnv:
    """The parallel environment of this process: rank 0 in a world of 1, on device 0."""

    @property
    def rank(self) -> int:
        """This process's rank: 0."""
        return 0

    @property
    def world_size(self) -> int:
        """The number of processes: 1."""
        return 1

    @property
    def device_id(self) -> int:
        """The device this process uses: 0."""
        return 0

    @property
    def trainer_endpoints(self) -> list[str]:
        """The processes' addresses: one empty one."""
        return [""]

    @property
    def current_endpoint(self) -> str:
        """This process's address: empty (no launcher)."""
        return ""

    @property
    def nrings(self) -> int:
        """The number of NCCL rings: 1."""
        return 1

    # Paddle's aliases, kept for older model code
    local_rank = rank
    nranks = world_size
    dev_id = device_id


class DataParallel(Layer):
    """Wraps `layers` for data-parallel training. On one process it only calls the wrapped layer;
    `state_dict` / `set_state_dict` use the wrapped layer's own keys (no `_layers.` prefix), so a
    checkpoint saved through the wrapper loads into the bare model and back, as in Paddle."""

    def __init__(self, layers: Layer, strategy: Any = None, comm_buffer_size: int = 25,
                 last_comm_buffer_size: float = 1, find_unused_parameters: bool = False, group: Any = None):
        if not isinstance(layers, Layer):
            raise TypeError(f"DataParallel: argument 'layers' must be a paddle.nn.Layer, got {type(layers).__name__}")
        if not in_dynamic_mode():
            raise RuntimeError("DataParallel: it is not supported in static graph mode")
        super().__init__(layers.full_name() + "_data_parallel")
        self._layers = layers
        self.find_unused_parameters = find_unused_parameters
        self.grad_need_sync = True
        self.group = group

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        """The wrapped layer's output."""
        return self._layers(*inputs, **kwargs)

    def scale_loss(self, loss: Any) -> Any:
        """The loss unchanged (kept for Paddle 1.x code, as Paddle keeps it)."""
        return loss

    def apply_collective_grads(self) -> None:
        """Nothing to synchronise on one process (kept for Paddle 1.x code)."""

    def state_dict(self, destination: dict | None = None, include_sublayers: bool = True,
                   structured_name_prefix: str = "", use_hook: bool = True) -> dict:
        """The wrapped layer's state dict."""
        return self._layers.state_dict(destination, include_sublayers, structured_name_prefix, use_hook)

    def set_state_dict(self, state_dict: dict, use_structured_name: bool = True) -> tuple[list[str], list[str]]:
        """Load into the wrapped layer."""
        return self._layers.set_state_dict(state_dict, use_structured_name)

    set_dict = set_state_dict
    load_dict = set_state_dict
