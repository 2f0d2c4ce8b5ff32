"""Account keys: BIP-39/BIP-32 derivation (``hd``), the on-disk keyring (``keyring``) and ``gonkad keys`` (``cli``)."""

from sdk.keyring.keyring import KeyInfo, Keyring, KeyringError, generate_test_keys

__all__ = ["KeyInfo", "Keyring", "KeyringError", "generate_test_keys"]
