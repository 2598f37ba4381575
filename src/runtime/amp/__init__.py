"""paddle.amp: auto_cast, GradScaler and decorate, with Paddle 3.3.1's behaviour.

runtime has no mixed-precision kernels: auto_cast and decorate validate their arguments and change no
dtype (on a CPU place that is exactly Paddle's CPU build; on a GPU place it is a documented deviation).
GradScaler runs Paddle's dynamic loss scaling where Paddle enables it (a GPU place) and passes
everything through on the CPU, as Paddle's CPU build. See docs/runtime.md, "Mixed precision: paddle.amp".
"""
from .auto_cast import amp_guard, auto_cast, is_autocast_enabled
from .decorate import amp_decorate, decorate
from .grad_scaler import AmpScaler, GradScaler, OptimizerState
from .lists import black_list, white_list
from .support import is_bfloat16_supported, is_float16_supported

__all__ = ["auto_cast", "amp_guard", "is_autocast_enabled", "decorate", "amp_decorate", "GradScaler", "AmpScaler",
           "OptimizerState", "white_list", "black_list", "is_float16_supported", "is_bfloat16_supported"]
