"""x/consensus's name and store prefix. The prefix holds nothing: the params are framework state
(``baseapp/consensus_params``, ``sdk/baseapp/state.py``), which the module reads and writes through BaseApp's
helpers."""

from __future__ import annotations

MODULE_NAME = "consensus"
STORE_PREFIX = b"consensus/"
