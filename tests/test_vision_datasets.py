"""paddle.vision.datasets over tiny files written by the tests: idx .gz files, cifar tarballs
and class folders. Items are checked against the arrays the files were written from."""
import gzip
import io
import os
import pickle
import tarfile

import numpy as np
import pytest

import runtime as paddle
from runtime.io import DataLoader
from runtime.vision import datasets, transforms as T
from runtime.vision.datasets import _common

try:
    import PIL  # noqa: F401
    HAVE_PIL = True
except ImportError:
    HAVE_PIL = False


def _write_idx(path, arr: np.ndarray, magic: int) -> str:
    header = np.array([magic, *arr.shape], dtype=">u4").tobytes()
    with gzip.open(path, "wb") as f:
        f.write(header + arr.astype(np.uint8).tobytes())
    return str(path)


@pytest.fixture
def mnist_files(tmp_path):
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, (7, 28, 28), dtype=np.uint8)
    labels = rng.integers(0, 10, 7, dtype=np.uint8)
    return (_write_idx(tmp_path / "img.gz", images, 2051), _write_idx(tmp_path / "lab.gz", labels, 2049),
            images, labels)


def test_mnist_cv2_items_are_float_images_and_int64_labels(mnist_files):
    img_path, lab_path, images, labels = mnist_files
    ds = datasets.MNIST(image_path=img_path, label_path=lab_path, mode="test", backend="cv2")
    assert len(ds) == 7
    for i in (0, 6):
        image, label = ds[i]
        assert image.dtype == np.float32 and image.shape == (28, 28)
        np.testing.assert_array_equal(image, images[i].astype(np.float32))
        assert label.dtype == np.int64 and label.shape == (1,) and label[0] == labels[i]


def test_fashion_mnist_applies_the_transform(mnist_files):
    img_path, lab_path, images, _ = mnist_files
    ds = datasets.FashionMNIST(image_path=img_path, label_path=lab_path, backend="cv2",
                               transform=T.Compose([T.Resize((14, 14), "nearest"), T.Transpose(),
                                                    T.Normalize([127.5], [127.5])]))
    image, _ = ds[2]
    ref = (images[2][1::2, 1::2].astype(np.float32) - 127.5) / 127.5  # nearest 28 -> 14 samples pixel centres: 1, 3, ..
    assert image.shape == (1, 14, 14)
    np.testing.assert_allclose(image[0], ref, rtol=1e-6)


@pytest.mark.skipif(HAVE_PIL, reason="checks the 'pil' backend without Pillow")
def test_mnist_pil_backend_without_pillow_gives_uint8_arrays(mnist_files):
    img_path, lab_path, images, _ = mnist_files
    image, label = datasets.MNIST(image_path=img_path, label_path=lab_path)[3]
    assert image.dtype == np.uint8
    np.testing.assert_array_equal(image, images[3])
    assert label.shape == (1,)


@pytest.mark.skipif(not HAVE_PIL, reason="Pillow is not installed")
def test_mnist_pil_backend_gives_pil_images(mnist_files):
    img_path, lab_path, images, _ = mnist_files
    image, _ = datasets.MNIST(image_path=img_path, label_path=lab_path, backend="pil")[3]
    np.testing.assert_array_equal(np.asarray(image), images[3])


def test_mnist_batches_through_the_dataloader(mnist_files):
    img_path, lab_path, images, labels = mnist_files
    ds = datasets.MNIST(image_path=img_path, label_path=lab_path, backend="cv2", transform=T.ToTensor())
    batches = list(DataLoader(ds, batch_size=3, shuffle=False))
    assert len(batches) == 3
    x, y = batches[0]
    assert x.shape == [3, 1, 28, 28] and x.dtype == paddle.float32
    np.testing.assert_array_equal(x.numpy()[:, 0], images[:3].astype(np.float32))  # float input: not scaled
    assert y.shape == [3, 1] and y.dtype == paddle.int64
    np.testing.assert_array_equal(y.numpy()[:, 0], labels[:3])
    assert batches[-1][0].shape[0] == 1


def test_mnist_rejects_bad_files_and_arguments(mnist_files, tmp_path):
    img_path, lab_path, _, _ = mnist_files
    with pytest.raises(ValueError, match="magic number 2051"):
        datasets.MNIST(image_path=lab_path, label_path=lab_path)
    short = _write_idx(tmp_path / "short.gz", np.zeros(3, np.uint8), 2049)
    with pytest.raises(ValueError, match="7 images but .* 3 labels"):
        datasets.MNIST(image_path=img_path, label_path=short)
    with pytest.raises(ValueError, match="mode"):
        datasets.MNIST(image_path=img_path, label_path=lab_path, mode="valid")
    with pytest.raises(ValueError, match="backend"):
        datasets.MNIST(image_path=img_path, label_path=lab_path, backend="cv3")
    with pytest.raises(FileNotFoundError, match="image_path"):
        datasets.MNIST(image_path=str(tmp_path / "missing.gz"), label_path=lab_path)


def test_missing_default_file_names_the_file_and_where_to_put_it(monkeypatch, tmp_path):
    monkeypatch.setattr(_common, "DATA_HOME", str(tmp_path / "home"))
    with pytest.raises(FileNotFoundError) as err:
        datasets.MNIST(mode="test")
    msg = str(err.value)
    assert "t10k-images-idx3-ubyte.gz" in msg and str(tmp_path / "home" / "mnist") in msg
    assert "https://dataset.bj.bcebos.com/mnist/t10k-images-idx3-ubyte.gz" in msg
    with pytest.raises(ValueError, match="downloading automatically is disabled"):
        datasets.Cifar10(download=False)


def test_a_file_in_the_default_place_is_used(monkeypatch, tmp_path, mnist_files):
    img_path, lab_path, images, _ = mnist_files
    home = tmp_path / "home"
    (home / "mnist").mkdir(parents=True)
    os.replace(img_path, home / "mnist" / "train-images-idx3-ubyte.gz")
    os.replace(lab_path, home / "mnist" / "train-labels-idx1-ubyte.gz")
    monkeypatch.setattr(_common, "DATA_HOME", str(home))
    image, _ = datasets.MNIST(backend="cv2")[5]
    np.testing.assert_array_equal(image, images[5])


# ---------------------------------------------------------------- cifar
def _add_member(tar: tarfile.TarFile, name: str, payload: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(payload)
    tar.addfile(info, io.BytesIO(payload))


def _cifar_tarball(path, batches: dict, label_key: bytes) -> tuple[str, dict]:
    rng = np.random.default_rng(1)
    written = {}
    with tarfile.open(path, "w:gz") as tar:
        for name, n in batches.items():
            data = rng.integers(0, 256, (n, 3072), dtype=np.uint8)
            labels = [int(v) for v in rng.integers(0, 100, n)]
            written[name] = (data, labels)
            _add_member(tar, name, pickle.dumps({b"batch_label": b"x", b"data": data, label_key: labels}, protocol=2))
    return str(path), written


def test_cifar10_reads_the_train_batches_in_order(tmp_path):
    path, written = _cifar_tarball(tmp_path / "c10.tar.gz", {"cifar-10-batches-py/data_batch_2": 2,
                                                             "cifar-10-batches-py/data_batch_1": 3,
                                                             "cifar-10-batches-py/test_batch": 4}, b"labels")
    ds = datasets.Cifar10(data_file=path, mode="train", backend="cv2")
    assert len(ds) == 5
    first, second = written["cifar-10-batches-py/data_batch_1"], written["cifar-10-batches-py/data_batch_2"]
    data, labels = np.concatenate([first[0], second[0]]), first[1] + second[1]
    image, label = ds[4]
    assert image.shape == (32, 32, 3) and image.dtype == np.float32
    np.testing.assert_array_equal(image, data[4].reshape(3, 32, 32).transpose(1, 2, 0))
    assert label.dtype == np.int64 and label.shape == () and label == labels[4]
    assert len(datasets.Cifar10(data_file=path, mode="test", backend="cv2")) == 4


def test_cifar100_uses_fine_labels_and_batches_with_transforms(tmp_path):
    path, written = _cifar_tarball(tmp_path / "c100.tar.gz", {"cifar-100-python/train": 6,
                                                              "cifar-100-python/test": 2}, b"fine_labels")
    ds = datasets.Cifar100(data_file=path, mode="train", backend="cv2",
                           transform=T.Compose([T.CenterCrop(24), T.ToTensor()]))
    x, y = next(iter(DataLoader(ds, batch_size=4)))
    assert x.shape == [4, 3, 24, 24] and y.shape == [4]
    data, labels = written["cifar-100-python/train"]
    np.testing.assert_array_equal(y.numpy(), labels[:4])
    crop = data[1].reshape(3, 32, 32)[:, 4:28, 4:28]  # uint8 reaches ToTensor, so it is scaled to [0, 1]
    np.testing.assert_allclose(x.numpy()[1], crop.astype(np.float32) / 255.0, rtol=0, atol=1e-7)


def test_cifar_refuses_a_pickle_that_would_run_code(tmp_path):
    class Exploit:
        def __reduce__(self):
            return (os.system, ("echo pwned",))

    path = tmp_path / "evil.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        _add_member(tar, "cifar-10-batches-py/data_batch_1", pickle.dumps({b"data": Exploit(), b"labels": [1]}))
    with pytest.raises(pickle.UnpicklingError, match="posix.system|os.system"):
        datasets.Cifar10(data_file=str(path))


@pytest.mark.parametrize("protocol", [2, 4])
@pytest.mark.parametrize("key", ["data", b"data"])
def test_cifar_batches_of_any_protocol_and_key_kind_load(tmp_path, protocol, key):
    data = np.arange(2 * 3072).reshape(2, 3072).astype(np.uint8)
    labels_key = "labels" if isinstance(key, str) else b"labels"
    path = tmp_path / "c.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        _add_member(tar, "cifar-10-batches-py/test_batch",
                    pickle.dumps({key: data, labels_key: [3, 4]}, protocol=protocol))
    ds = datasets.Cifar10(data_file=str(path), mode="test", backend="cv2")
    np.testing.assert_array_equal(ds[1][0], data[1].reshape(3, 32, 32).transpose(1, 2, 0))
    assert [int(ds[i][1]) for i in range(2)] == [3, 4]


# ---------------------------------------------------------------- folders
@pytest.fixture
def npy_tree(tmp_path):
    arrays = {}
    for cls, n in (("cat", 2), ("dog", 3)):
        (tmp_path / cls / "sub").mkdir(parents=True)
        for i in range(n):
            arr = np.full((4, 5, 3), 10 * i + (cls == "dog"), np.uint8)
            where = tmp_path / cls / ("sub" if i == 2 else "") / f"{i}.npy"
            np.save(where, arr)
            arrays[str(where)] = arr
    (tmp_path / "dog" / "notes.txt").write_text("not a sample")
    return tmp_path, arrays


def test_dataset_folder_labels_by_sorted_class_directory(npy_tree):
    root, arrays = npy_tree
    ds = datasets.DatasetFolder(str(root))
    assert ds.classes == ["cat", "dog"] and ds.class_to_idx == {"cat": 0, "dog": 1}
    assert len(ds) == 5 and ds.targets == [0, 0, 1, 1, 1]
    for i, (path, target) in enumerate(ds.samples):
        sample, label = ds[i]
        np.testing.assert_array_equal(sample, arrays[path])
        assert label == target


def test_dataset_folder_transform_loader_and_dataloader(npy_tree):
    root, _ = npy_tree
    ds = datasets.DatasetFolder(str(root), transform=T.ToTensor())
    x, y = next(iter(DataLoader(ds, batch_size=5)))
    assert x.shape == [5, 3, 4, 5] and y.numpy().tolist() == [0, 0, 1, 1, 1]
    texts = datasets.DatasetFolder(str(root), loader=lambda p: open(p).read(), extensions=(".txt",))
    assert len(texts) == 1 and texts[0] == ("not a sample", 1)
    picked = datasets.DatasetFolder(str(root), is_valid_file=lambda p: p.endswith("1.npy"))
    assert len(picked) == 2


def test_image_folder_lists_every_file_unlabelled(npy_tree):
    root, arrays = npy_tree
    ds = datasets.ImageFolder(str(root))
    assert len(ds) == 5
    item = ds[0]
    assert isinstance(item, list) and len(item) == 1
    np.testing.assert_array_equal(item[0], arrays[ds.samples[0]])


def test_folders_report_empty_and_missing_roots(tmp_path):
    (tmp_path / "a").mkdir()
    with pytest.raises(RuntimeError, match="Found 0"):
        datasets.DatasetFolder(str(tmp_path))
    with pytest.raises(RuntimeError, match="Found 0 files"):
        datasets.ImageFolder(str(tmp_path))
    with pytest.raises(FileNotFoundError, match="root"):
        datasets.ImageFolder(str(tmp_path / "nope"))


@pytest.mark.skipif(HAVE_PIL, reason="checks the default loader without Pillow")
def test_default_loader_without_pillow_names_what_it_needs(tmp_path):
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "x.png").write_bytes(b"\x89PNG")
    ds = datasets.DatasetFolder(str(tmp_path))
    with pytest.raises(ImportError, match="Pillow.*npy"):
        ds[0]


def test_flowers_and_voc_are_not_available():
    for cls in (datasets.Flowers, datasets.VOC2012):
        with pytest.raises(NotImplementedError, match=cls.__name__):
            cls(mode="train")
