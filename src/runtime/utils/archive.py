"""Extract a downloaded tar or zip archive beside itself, as paddle.utils.download does.

The returned path follows Paddle's rule: the single file or single top directory of the
archive, otherwise a directory named after the archive. Extraction refuses members that
would land outside that directory (absolute paths, `..`, links). A NumPy .npz archive (what
paddle.save writes) is a zip too, but it is a weights file, not a download archive: it is
left as it is."""
from __future__ import annotations

import os
import os.path as osp
import tarfile
import zipfile

__all__ = ["extract_if_archive"]


def _is_npz(path: str) -> bool:
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
    return bool(names) and all(n.endswith(".npy") for n in names)


def _target(archive: str, names: list[str]) -> tuple[str, str]:
    """(directory to extract into, path to return) for an archive holding `names`."""
    file_dir = osp.dirname(archive)
    tops = {n.replace("\\", "/").strip("/").split("/")[0] for n in names}
    if len(names) == 1 and "/" not in names[0]:
        return file_dir, osp.join(file_dir, names[0])
    if len(tops) == 1:
        return file_dir, osp.join(file_dir, osp.splitext(tops.pop())[0])
    into = osp.join(file_dir, osp.splitext(osp.basename(archive))[0])
    return into, into


def _check_member(name: str, into: str) -> None:
    target = osp.realpath(osp.join(into, name))
    if osp.isabs(name) or ".." in name.replace("\\", "/").split("/") or \
            osp.commonpath([osp.realpath(into), target]) != osp.realpath(into):
        raise ValueError(f"Unsafe path in archive: {name!r}")


def extract_if_archive(path: str) -> str:
    """`path` itself unless it is a tar or (non-.npz) zip archive; then the extracted path."""
    if tarfile.is_tarfile(path):
        with tarfile.open(path, "r:*") as tar:
            members = tar.getmembers()
            into, out = _target(path, [m.name for m in members])
            for m in members:
                _check_member(m.name, into)
            os.makedirs(into, exist_ok=True)
            # the "data" filter refuses links out of the tree, device files and setuid bits
            tar.extractall(into, filter="data")
        return out
    if zipfile.is_zipfile(path) and not _is_npz(path):
        with zipfile.ZipFile(path) as z:
            names = z.namelist()
            into, out = _target(path, names)
            for n in names:
                _check_member(n, into)
            os.makedirs(into, exist_ok=True)
            z.extractall(into)
        return out
    return path
