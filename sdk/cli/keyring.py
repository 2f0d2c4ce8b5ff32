"""The keyring a command's flags name (--home, --keyring-backend), with passphrases from the environment.

Passphrases come from $GONKA_KEYRING_PASSPHRASE / $GONKA_EXPORT_PASSPHRASE when set (scripts, tests),
else from a no-echo prompt; they are asked for only when a secret is touched.
"""

from __future__ import annotations

import argparse
import getpass
import os
from pathlib import Path

from sdk.keyring import Keyring, KeyringError

KEYRING_PASSPHRASE_ENV = "GONKA_KEYRING_PASSPHRASE"
EXPORT_PASSPHRASE_ENV = "GONKA_EXPORT_PASSPHRASE"


def passphrase(env: str, what: str, confirm: bool) -> str:
    """$env if set, else a prompt (twice when it sets a new passphrase, since a typo would lock keys away)."""
    value = os.environ.get(env)
    if value is not None:
        return value
    try:
        value = getpass.getpass(f"Enter {what}: ")
        if confirm and getpass.getpass(f"Re-enter {what}: ") != value:
            raise KeyringError(f"the two {what}s differ")
    except EOFError:
        raise KeyringError(f"no {what}: set {env} or run in a terminal") from None
    return value


def open_keyring(args: argparse.Namespace) -> Keyring:
    """The keyring of --home/--keyring-backend; the file backend asks for its passphrase on first need only."""
    home = Path(args.home)

    def ask() -> str:
        new = not Keyring(home, "file").is_initialised
        return passphrase(KEYRING_PASSPHRASE_ENV, "keyring passphrase", confirm=new)

    return Keyring(home, args.keyring_backend, ask)
