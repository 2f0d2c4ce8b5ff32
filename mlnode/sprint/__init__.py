"""Sprint (Transformer PoW 2.0): the race a node runs on an epoch seed, its Merkle commitment, and the
sampling verifier that catches invalid proofs. See README.md for the protocol and its parameters.

Import from the modules (``mlnode.sprint.race``, ``mlnode.sprint.verifier``, ...): this package imports
nothing itself, so ``mlnode.sprint.params`` (the presets the CLI checks) loads without torch.
"""
