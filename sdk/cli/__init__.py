"""What every command line shares: the Cosmos flags, output printing, the keyring from flags, and
broadcasting a command's messages. Module CLIs (``x/<module>/cli.py``) build on it; ``gonkad`` wires them."""
