"""paddle.utils.download works offline: a model-zoo file placed where Paddle would have
downloaded it is found (md5 checked), a missing one raises an error that says where to put it,
and nothing ever opens a socket. Also paddle.utils.try_import and paddle.utils.deprecated."""
import hashlib
import importlib
import io
import socket
import tarfile
import warnings

import numpy as np
import pytest

import runtime as paddle
from runtime.utils import download

URL = "https://paddle-hapi.bj.bcebos.com/models/resnet18.pdparams"


@pytest.fixture(autouse=True)
def _no_network(monkeypatch):
    """Any socket a test opens fails the test: the helpers must never download."""
    def refuse(*args, **kwargs):
        raise AssertionError("paddle.utils.download opened a socket")
    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


@pytest.fixture
def weights_home(tmp_path, monkeypatch):
    home = tmp_path / "weights"
    home.mkdir()
    monkeypatch.setattr(download, "WEIGHTS_HOME", str(home))
    return home


def test_a_placed_weights_file_is_found_by_the_name_paddle_gives_it(weights_home):
    data = b"weights bytes"
    (weights_home / "resnet18.pdparams").write_bytes(data)
    md5 = hashlib.md5(data).hexdigest()
    assert download.get_weights_path_from_url(URL) == str(weights_home / "resnet18.pdparams")
    assert download.get_weights_path_from_url(URL, md5) == str(weights_home / "resnet18.pdparams")
    assert paddle.utils.download.get_weights_path_from_url is download.get_weights_path_from_url


def test_a_missing_file_names_the_file_the_url_and_where_to_put_it(weights_home):
    with pytest.raises(RuntimeError) as e:
        download.get_weights_path_from_url(URL)
    msg = str(e.value)
    for part in ("'resnet18.pdparams'", URL, repr(str(weights_home / "resnet18.pdparams")), "WEIGHTS_HOME"):
        assert part in msg
    assert not (weights_home / "resnet18.pdparams").exists()


def test_an_md5_mismatch_names_both_sums(weights_home):
    (weights_home / "resnet18.pdparams").write_bytes(b"not the zoo file")
    actual = hashlib.md5(b"not the zoo file").hexdigest()
    expected = "0123456789abcdef0123456789abcdef"
    with pytest.raises(RuntimeError, match=f"{actual}.*{expected}"):
        download.get_weights_path_from_url(URL, expected)


def test_weights_home_follows_home_like_paddle(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    try:
        importlib.reload(download)
        assert download.WEIGHTS_HOME == str(tmp_path / ".cache" / "paddle" / "hapi" / "weights")
    finally:
        monkeypatch.undo()
        importlib.reload(download)


def test_get_path_from_url_uses_root_dir_and_checks_its_arguments(tmp_path):
    (tmp_path / "data.txt").write_text("x")
    url = "https://example.com/files/data.txt"
    assert download.get_path_from_url(url, str(tmp_path)) == str(tmp_path / "data.txt")
    assert download.get_path_from_url(url, str(tmp_path), check_exist=False) == str(tmp_path / "data.txt")
    with pytest.raises(RuntimeError, match="pass it as root_dir"):
        download.get_path_from_url("https://example.com/other.txt", str(tmp_path))
    with pytest.raises(ValueError, match="not a url"):
        download.get_path_from_url("/local/data.txt", str(tmp_path))
    with pytest.raises(ValueError, match="method"):
        download.get_path_from_url(url, str(tmp_path), method="curl")
    assert download.is_url("http://a/b") and download.is_url("https://a/b") and not download.is_url("ftp://a/b")


def _tar(path, members):
    with tarfile.open(path, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def test_an_archive_is_extracted_to_the_path_paddle_returns(tmp_path):
    _tar(tmp_path / "pack.tar.gz", {"model/a.txt": b"a", "model/b.txt": b"b"})
    out = download.get_path_from_url("https://example.com/pack.tar.gz", str(tmp_path))
    assert out == str(tmp_path / "model")
    assert (tmp_path / "model" / "b.txt").read_bytes() == b"b"
    _tar(tmp_path / "two.tar.gz", {"x.txt": b"x", "y.txt": b"y"})
    assert download.get_path_from_url("https://example.com/two.tar.gz", str(tmp_path)) == str(tmp_path / "two.tar")
    assert (tmp_path / "two.tar" / "y.txt").read_bytes() == b"y"
    kept = download.get_path_from_url("https://example.com/pack.tar.gz", str(tmp_path), decompress=False)
    assert kept == str(tmp_path / "pack.tar.gz")


def test_an_archive_member_escaping_the_directory_is_refused(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    _tar(root / "evil.tar", {"ok.txt": b"ok", "../escaped.txt": b"evil"})
    with pytest.raises(ValueError, match="escaped.txt"):
        download.get_path_from_url("https://example.com/evil.tar", str(root))
    assert not (tmp_path / "escaped.txt").exists()


def test_a_paddle_save_file_is_a_zip_but_is_not_extracted(tmp_path):
    paddle.save({"w": paddle.to_tensor([1.0, 2.0])}, str(tmp_path / "mine.pdparams"))
    path = download.get_path_from_url("https://example.com/mine.pdparams", str(tmp_path))
    assert path == str(tmp_path / "mine.pdparams")
    np.testing.assert_array_equal(paddle.load(path)["w"].numpy(), [1.0, 2.0])


def test_try_import_returns_the_module_or_names_the_package():
    assert paddle.utils.try_import("json.decoder") is importlib.import_module("json.decoder")
    with pytest.raises(ImportError, match="pip install no_such_pkg_xyz"):
        paddle.utils.try_import("no_such_pkg_xyz.sub")
    with pytest.raises(ImportError, match="custom"):
        paddle.utils.try_import("no_such_pkg_xyz", "custom")


def test_deprecated_levels_silent_warn_raise():
    def f(x):
        """Doc."""
        return x + 1

    silent = paddle.utils.deprecated(since="2.0.0", update_to="paddle.g")(f)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert silent(1) == 2
    assert "deprecated since 2.0.0" in silent.__doc__ and 'Please use "paddle.g"' in silent.__doc__
    warn = paddle.utils.deprecated(since="2.0.0", level=1)(lambda x: x * 3)
    with pytest.warns(UserWarning, match="is deprecated since 2.0.0"):
        assert warn(2) == 6
    raising = paddle.utils.deprecated(level=2)(f)
    with pytest.raises(RuntimeError, match="has been deprecated"):
        raising(1)
    with pytest.raises(ValueError, match='start with "paddle."'):
        paddle.utils.deprecated(update_to="numpy.g")
