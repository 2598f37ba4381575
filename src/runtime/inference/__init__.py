"""`paddle.inference`: Paddle's deployment API (Config, create_predictor, Predictor and its Tensor
handles) over models exported by `paddle.jit.save` / `paddle.static.save_inference_model`.

The files are this project's own safe formats (JSON program, `.npz` parameters); a model exported
by PaddlePaddle itself (protobuf `.pdmodel`, PIR `.json`) is refused with an error saying so. A
Predictor runs the loaded program with the static executor; the Config switches that in Paddle
only change speed (IR passes, oneDNN, memory reuse, thread counts, logging) are recorded and shown
by `summary()` but change nothing here.
"""
from .config import Config
from .enums import DataType, PlaceType, PrecisionType, get_num_bytes_of_data_type
from .predictor import Predictor, PredictorPool, Tensor, create_predictor, get_version

__all__ = ["Config", "Predictor", "PredictorPool", "Tensor", "create_predictor", "get_version", "DataType",
           "PlaceType", "PrecisionType", "get_num_bytes_of_data_type"]
