"""DiLoCo training of the ML node's transformer across k workers, with Proof-of-Learning records.

``diloco/README.md`` describes the algorithm, the elastic membership protocol, the on-disk layout and
the record format.
"""
