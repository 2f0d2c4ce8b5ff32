"""x/epochs store layout, under the module prefix ``epochs/``.

0x01 -> gonka.epochs.v1.Epoch   the current epoch (number, first block, the schedule in force)
0x51 -> gonka.epochs.v1.Params  the schedule the next epoch takes
"""

from __future__ import annotations

MODULE_NAME = "epochs"
STORE_PREFIX = b"epochs/"
CURRENT_EPOCH_KEY = b"\x01"
PARAMS_KEY = b"\x51"
