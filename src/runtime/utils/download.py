"""paddle.utils.download, offline: find model-zoo files that the user has placed locally.

Paddle downloads a missing file from its URL; runtime never touches the network. A file is
looked up where Paddle would have saved it (`root_dir` joined with the last part of the URL;
for weights `WEIGHTS_HOME`, `~/.cache/paddle/hapi/weights`), its md5 is checked when one is
given, and a missing file raises a RuntimeError (Paddle's type for a failed download) that says
which file to put where. `WEIGHTS_HOME` is read at each call, so code may point it elsewhere
(`paddle.utils.download.WEIGHTS_HOME = path`), as with Paddle; like Paddle it follows $HOME.
"""
from __future__ import annotations

import hashlib
import os
import os.path as osp

from .archive import extract_if_archive

__all__ = ["get_weights_path_from_url"]

WEIGHTS_HOME = osp.expanduser("~/.cache/paddle/hapi/weights")

_METHODS = ("get", "wget")  # Paddle's names; neither downloads here


def is_url(path: str) -> bool:
    """Whether `path` is an http(s) URL."""
    return path.startswith("http://") or path.startswith("https://")


def get_weights_path_from_url(url: str, md5sum: str | None = None) -> str:
    """The local path of the weights file `url` names, looked up in WEIGHTS_HOME."""
    return get_path_from_url(url, WEIGHTS_HOME, md5sum)


def _md5(path: str) -> str:
    md5 = hashlib.md5()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            md5.update(chunk)
    return md5.hexdigest()


def get_path_from_url(url: str, root_dir: str, md5sum: str | None = None, check_exist: bool = True,
                      decompress: bool = True, method: str = "get") -> str:
    """The local path of the file `url` names under `root_dir` (an archive is extracted, as Paddle does).

    `check_exist=False` makes Paddle download again, but its download step keeps a present file
    whose md5 matches, so a present file is used either way; a missing one raises RuntimeError."""
    if not is_url(url):
        raise ValueError(f"downloading from {url} not a url")
    if method not in _METHODS:
        raise ValueError(f"get_path_from_url: method must be one of {list(_METHODS)}, got {method!r}")
    fname = osp.split(url)[-1]
    fullpath = osp.join(root_dir, fname)
    if not fname or not osp.isfile(fullpath):
        elsewhere = ("set paddle.utils.download.WEIGHTS_HOME to it before the call (by default it is "
                     "~/.cache/paddle/hapi/weights under $HOME)"
                     if osp.abspath(root_dir) == osp.abspath(WEIGHTS_HOME) else "pass it as root_dir")
        raise RuntimeError(
            f"Download from {url} failed: runtime never downloads. The file {fname!r} is not in {root_dir!r}; "
            f"download it yourself and put it at {fullpath!r}. To keep it in another directory, {elsewhere}.")
    if md5sum is not None:
        actual = _md5(fullpath)
        if actual != md5sum:
            raise RuntimeError(f"File {fullpath!r} md5 check failed: {actual} (calc) != {md5sum} (base); it is "
                               f"not the file {url} names. Replace it with a fresh copy from that URL.")
    return extract_if_archive(fullpath) if decompress else fullpath
