"""The client library: build, sign, simulate, broadcast and query for programs (no argparse, no exits;
failures are typed exceptions). The CLI (``sdk.cli``, ``gonkad``) wraps it."""
