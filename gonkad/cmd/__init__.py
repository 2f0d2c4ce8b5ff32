"""``gonkad`` subcommands that are the binary's own, not a module's: keys, genesis, query tx."""
