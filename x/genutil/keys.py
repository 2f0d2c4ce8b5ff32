"""x/genutil's name and store prefix. The prefix holds nothing: the gentxs' state is in the modules they ran."""

from __future__ import annotations

MODULE_NAME = "genutil"
STORE_PREFIX = b"genutil/"
