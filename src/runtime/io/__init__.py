"""`paddle.io`: Dataset, TensorDataset, DataLoader and samplers."""
