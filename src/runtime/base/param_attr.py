"""`paddle.base.param_attr`: where Paddle 2.x model files import ParamAttr from."""
from ..nn.param_attr import ParamAttr

__all__ = ["ParamAttr"]
