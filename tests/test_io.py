"""paddle.io: datasets, samplers, random_split and the DataLoader with its default collation."""
import numpy as np
import pytest

import runtime as paddle
from runtime.io import (BatchSampler, ChainDataset, ComposeDataset, ConcatDataset, DataLoader, Dataset,
                        DistributedBatchSampler, IterableDataset, RandomSampler, SequenceSampler, Subset,
                        SubsetRandomSampler, TensorDataset, WeightedRandomSampler, default_collate_fn,
                        get_worker_info, random_split)

X = np.arange(30, dtype=np.float32).reshape(10, 3)
Y = np.arange(10, dtype=np.int64) * 10


class Pairs(Dataset):
    def __len__(self):
        return 10

    def __getitem__(self, i):
        return X[i], int(Y[i])


class Dicts(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        return {"x": X[i], "label": float(i), "name": f"s{i}", "nested": (X[i, :1], i)}


class Stream(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        for i in range(self.n):
            yield X[i], np.int64(i)


def test_dataset_base_raises():
    with pytest.raises(NotImplementedError, match="__getitem__"):
        Dataset()[0]
    with pytest.raises(NotImplementedError, match="__len__"):
        len(Dataset())
    with pytest.raises(TypeError, match="IterableDataset"):
        len(Stream(3))


def test_dataloader_batches_in_order():
    loader = DataLoader(Pairs(), batch_size=4)
    assert len(loader) == 3
    batches = list(loader)
    assert [b[0].shape for b in batches] == [[4, 3], [4, 3], [2, 3]]
    x, y = batches[0]
    assert isinstance(x, paddle.Tensor) and x.dtype == paddle.float32
    assert y.dtype == paddle.int64
    np.testing.assert_array_equal(x.numpy(), X[:4])
    np.testing.assert_array_equal(np.concatenate([b[1].numpy() for b in batches]), Y)


def test_dataloader_drop_last():
    loader = DataLoader(Pairs(), batch_size=4, drop_last=True)
    assert len(loader) == 2 and len(list(loader)) == 2


def test_shuffle_is_a_permutation_reproducible_with_seed():
    def epoch():
        return np.concatenate([y.numpy() for _, y in DataLoader(Pairs(), batch_size=3, shuffle=True)])
    paddle.seed(7)
    a = epoch()
    paddle.seed(7)
    b = epoch()
    c = epoch()
    np.testing.assert_array_equal(a, b)
    assert sorted(a.tolist()) == Y.tolist()
    assert not np.array_equal(b, c)


def test_collate_dicts_numbers_strings_and_nesting():
    (batch,) = list(DataLoader(Dicts(), batch_size=4))
    np.testing.assert_array_equal(batch["x"].numpy(), X[:4])
    assert batch["label"].dtype == paddle.float64  # Python floats collate through np.array, as Paddle
    np.testing.assert_array_equal(batch["label"].numpy(), [0.0, 1.0, 2.0, 3.0])
    assert batch["name"] == ["s0", "s1", "s2", "s3"]
    first, idx = batch["nested"]
    np.testing.assert_array_equal(first.numpy(), X[:4, :1])
    np.testing.assert_array_equal(idx.numpy(), [0, 1, 2, 3])


def test_default_collate_fn_stacks_tensors_and_checks_fields():
    out = default_collate_fn([paddle.to_tensor([1.0, 2.0]), paddle.to_tensor([3.0, 4.0])])
    np.testing.assert_array_equal(out.numpy(), [[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(RuntimeError, match="fields number not same"):
        default_collate_fn([(1, 2), (1, 2, 3)])
    with pytest.raises(TypeError, match="batch data can only contain"):
        default_collate_fn([object(), object()])


def test_tensor_dataset_and_custom_collate():
    ds = TensorDataset([paddle.to_tensor(X), paddle.to_tensor(Y)])
    assert len(ds) == 10
    x, y = ds[2]
    np.testing.assert_array_equal(x.numpy(), X[2])
    assert y.item() == 20
    loader = DataLoader(ds, batch_size=5, collate_fn=lambda samples: np.stack([s[1].numpy() for s in samples]))
    np.testing.assert_array_equal([b.numpy() for b in loader], [Y[:5], Y[5:]])
    with pytest.raises(ValueError, match="1st dimension"):
        TensorDataset([paddle.to_tensor(X), paddle.to_tensor(Y[:3])])
    with pytest.raises(TypeError, match="tensors\\[0\\]"):
        TensorDataset([[1, 2, 3]])


def test_iterable_dataset_batches():
    loader = DataLoader(Stream(7), batch_size=3)
    batches = list(loader)
    assert [b[0].shape[0] for b in batches] == [3, 3, 1]
    np.testing.assert_array_equal(batches[2][1].numpy(), [6])
    assert len(list(DataLoader(Stream(7), batch_size=3, drop_last=True))) == 2
    with pytest.raises(TypeError, match="IterableDataset"):
        len(loader)
    with pytest.raises(ValueError, match="shuffle"):
        DataLoader(Stream(3), shuffle=True)


def test_batch_size_none_returns_samples():
    samples = list(DataLoader(Pairs(), batch_size=None))
    assert len(samples) == 10
    x, y = samples[3]
    np.testing.assert_array_equal(x.numpy(), X[3])
    assert y == 30


def test_batch_sampler_argument():
    bs = BatchSampler(sampler=SequenceSampler(Pairs()), batch_size=6)
    loader = DataLoader(Pairs(), batch_sampler=bs)
    assert len(loader) == 2
    assert [len(b[1].numpy()) for b in loader] == [6, 4]
    with pytest.raises(ValueError, match="batch_sampler"):
        DataLoader(Pairs(), batch_sampler=bs, batch_size=2)


def test_batch_sampler_rules():
    assert list(BatchSampler(dataset=Pairs(), batch_size=4)) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert len(BatchSampler(dataset=Pairs(), batch_size=4, drop_last=True)) == 2
    with pytest.raises(ValueError, match="either dataset or sampler"):
        BatchSampler()
    with pytest.raises(ValueError, match="both dataset and sampler"):
        BatchSampler(dataset=Pairs(), sampler=SequenceSampler(Pairs()))
    with pytest.raises(ValueError, match="batch_size"):
        BatchSampler(dataset=Pairs(), batch_size=0)
    with pytest.raises(ValueError, match="shuffle should be False"):
        BatchSampler(sampler=SequenceSampler(Pairs()), shuffle=True)
    with pytest.raises(TypeError, match="IterableDataset"):
        BatchSampler(dataset=Stream(3))


def test_random_samplers():
    perm = list(RandomSampler(Pairs()))
    assert sorted(perm) == list(range(10))
    draws = list(RandomSampler(Pairs(), replacement=True, num_samples=25))
    assert len(draws) == 25 and all(0 <= d < 10 for d in draws)
    assert list(RandomSampler(Pairs(), generator=iter([3, 1, 2]), replacement=True, num_samples=3)) == [3, 1, 2]
    with pytest.raises(ValueError, match="num_samples should not be specified"):
        RandomSampler(Pairs(), num_samples=3)
    w = list(WeightedRandomSampler([0.0, 1.0, 0.0, 1.0], num_samples=50))
    assert set(w) <= {1, 3}
    with pytest.raises(ValueError, match="weights"):
        WeightedRandomSampler([-1.0, 1.0], 2)
    assert sorted(SubsetRandomSampler([5, 7, 9])) == [5, 7, 9]


def test_distributed_batch_sampler_single_rank_and_epoch_shuffle():
    s = DistributedBatchSampler(Pairs(), batch_size=4, shuffle=True)
    s.set_epoch(3)
    first = [i for b in s for i in b]
    s.set_epoch(3)
    assert [i for b in s for i in b] == first
    assert sorted(first) == list(range(10))
    two = [DistributedBatchSampler(Pairs(), batch_size=2, num_replicas=2, rank=r) for r in (0, 1)]
    shares = [[i for b in s for i in b] for s in two]
    assert shares == [[0, 2, 4, 6, 8], [1, 3, 5, 7, 9]] and len(two[0]) == 3


def test_subset_concat_compose_chain():
    sub = Subset(Pairs(), [4, 2])
    assert len(sub) == 2 and sub[0][1] == 40
    cat = ConcatDataset([Pairs(), Subset(Pairs(), [1])])
    assert len(cat) == 11 and cat[10][1] == 10 and cat[-1][1] == 10 and cat[9][1] == 90
    with pytest.raises(IndexError):
        cat[11]
    comp = ComposeDataset([Pairs(), Pairs()])
    assert len(comp[1]) == 4 and comp[1][3] == 10
    chained = list(ChainDataset([Stream(2), Stream(1)]))
    assert [int(s[1]) for s in chained] == [0, 1, 0]


def test_random_split():
    paddle.seed(3)
    a, b = random_split(Pairs(), [7, 3])
    idx = sorted(list(a.indices) + list(b.indices))
    assert idx == list(range(10)) and len(a) == 7 and len(b) == 3
    paddle.seed(3)
    a2, _ = random_split(Pairs(), [7, 3])
    assert list(a2.indices) == list(a.indices)
    parts = random_split(Pairs(), [0.5, 0.3, 0.2])
    assert [len(p) for p in parts] == [5, 3, 2]
    with pytest.raises(ValueError, match="does not equal"):
        random_split(Pairs(), [5, 3])


def test_dataloader_num_workers_runs_in_process():
    calls = []
    loader = DataLoader(Pairs(), batch_size=5, num_workers=2, worker_init_fn=calls.append)
    ys = [y.numpy().tolist() for _, y in loader]
    assert ys == [Y[:5].tolist(), Y[5:].tolist()] and calls == [0]
    assert get_worker_info() is None


def test_dataloader_argument_errors():
    with pytest.raises(ValueError, match="num_workers"):
        DataLoader(Pairs(), num_workers=-1)
    with pytest.raises(ValueError, match="batch_size"):
        DataLoader(Pairs(), batch_size=0)
    with pytest.raises(TypeError, match="collate_fn"):
        DataLoader(Pairs(), collate_fn=3)
