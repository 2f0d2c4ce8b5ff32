"""State-sync snapshots of the ``CommitStore`` (README.md): the format, the on-disk store, taking them after
commits and restoring one into an empty store. Framework code: it imports no app code."""
