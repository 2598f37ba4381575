"""The translation driver: the eval-frame callback that takes a frame through the stages
(decode -> simulate -> StatementIR -> guards -> codegen -> code cache), the registry of reasons a
frame breaks or runs eagerly, and `SOT_DUMP`."""
