"""paddle.utils.try_import: import an optional dependency, or say which package to install."""
from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["try_import"]

# import names whose pip package is called differently
_INSTALL_NAMES = {"cv2": "opencv-python"}


def try_import(module_name: str, err_msg: str | None = None) -> ModuleType:
    """The module `module_name`; an ImportError naming the pip package to install if it is missing."""
    install_name = _INSTALL_NAMES.get(module_name, module_name.split(".")[0])
    try:
        return importlib.import_module(module_name)
    except ImportError:
        if err_msg is None:
            err_msg = (f"Failed importing {module_name}. This likely means that some paddle modules require "
                       f"additional dependencies that have to be manually installed (usually with "
                       f"`pip install {install_name}`). ")
        raise ImportError(err_msg) from None
