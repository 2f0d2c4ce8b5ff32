"""``gonkad keys ...``: the keyring from the command line, in the shape of the Cosmos SDK's ``keys`` commands.

Failures raise KeyringError; gonkad's main CLI prints them as ``Error: <message>`` with exit code 1.
Passphrases come from $GONKA_KEYRING_PASSPHRASE / $GONKA_EXPORT_PASSPHRASE when set (scripts, tests),
else from a no-echo prompt; they are asked for only by commands that touch a secret.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from sdk.cli.flags import DEFAULT_HOME
from sdk.cli.keyring import EXPORT_PASSPHRASE_ENV, open_keyring, passphrase
from sdk.keyring import hd
from sdk.keyring.keyring import KeyInfo, KeyringError, validate_name
from x.bls.keyfile import public_info


def _check_new_name(args: argparse.Namespace) -> None:
    """Fail on a bad or taken name before asking for a mnemonic or passphrase."""
    validate_name(args.name)
    if any(info.name == args.name for info in open_keyring(args).list()):
        raise KeyringError(f"key {args.name!r} already exists")


def _hd_path(args: argparse.Namespace) -> str:
    if args.hd_path is not None:
        if args.account is not None or args.index is not None:
            raise KeyringError("--hd-path cannot be combined with --account or --index")
        return args.hd_path
    return hd.hd_path(args.account or 0, args.index or 0)


def _read_mnemonic() -> str:
    if sys.stdin.isatty():
        print("> Enter your bip39 mnemonic", file=sys.stderr)
    line = sys.stdin.readline().strip()
    if not line:
        raise KeyringError("no mnemonic given on stdin")
    return line


def _text(info: KeyInfo) -> str:
    """The YAML-like block ``keys show`` prints in Cosmos' text output."""
    d = info.as_dict()
    return (
        f"- address: {d['address']}\n  name: {d['name']}\n"
        f"  pubkey: '{json.dumps(d['pubkey'], separators=(',', ':'))}'\n  type: {d['type']}"
    )


def _print_key(args: argparse.Namespace, info: KeyInfo) -> None:
    print(json.dumps(info.as_dict()) if args.output == "json" else _text(info))


def cmd_add(args: argparse.Namespace) -> None:
    """New key from a fresh mnemonic, shown once; with --recover (or ``recover``) from one on stdin."""
    hd_path = _hd_path(args)
    _check_new_name(args)
    mnemonic = _read_mnemonic() if args.recover else None
    info, phrase = open_keyring(args).add(args.name, mnemonic, hd_path=hd_path)
    if args.recover:
        _print_key(args, info)
    elif args.output == "json":
        print(json.dumps({**info.as_dict(), "mnemonic": phrase}))
    else:
        print(
            f"{_text(info)}\n\n**Important** write this mnemonic phrase in a safe place.\n"
            f"It is the only way to recover your account if you ever forget your password.\n\n{phrase}"
        )


def cmd_list(args: argparse.Namespace) -> None:
    infos = open_keyring(args).list()
    if args.output == "json":
        print(json.dumps([info.as_dict() for info in infos]))
    else:
        print("\n".join(_text(info) for info in infos) if infos else "No records were found in keyring")


def cmd_show(args: argparse.Namespace) -> None:
    info = open_keyring(args).get(args.name)
    if args.address:
        print(info.address)
    elif args.pubkey:
        print(json.dumps(info.as_dict()["pubkey"], separators=(",", ":")))
    else:
        _print_key(args, info)


def cmd_delete(args: argparse.Namespace) -> None:
    keyring = open_keyring(args)
    keyring.get(args.name)
    if not args.yes:
        print("Key reference will be deleted. Continue? [y/N]: ", end="", file=sys.stderr, flush=True)
        if sys.stdin.readline().strip().lower() not in ("y", "yes"):
            raise KeyringError(f"aborted: key {args.name!r} not deleted")
    keyring.delete(args.name)
    print(json.dumps({"deleted": args.name}) if args.output == "json" else f"Key {args.name!r} deleted")


def cmd_export(args: argparse.Namespace) -> None:
    keyring = open_keyring(args)
    keyring.get(args.name)
    export_passphrase = passphrase(EXPORT_PASSPHRASE_ENV, "export passphrase", confirm=True)
    sys.stdout.write(keyring.export(args.name, export_passphrase))


def cmd_import(args: argparse.Namespace) -> None:
    _check_new_name(args)
    try:
        armored = Path(args.file).read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise KeyringError(f"cannot read {args.file}: {exc}") from None
    export_passphrase = passphrase(EXPORT_PASSPHRASE_ENV, "export passphrase", confirm=False)
    _print_key(args, open_keyring(args).import_key(args.name, armored, export_passphrase))


def cmd_bls_show(args: argparse.Namespace) -> None:
    """The node's BLS public key and proof of possession (lowercase hex) from HOME/config/bls_key.json."""
    print(json.dumps(public_info(Path(args.home))))


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``keys`` and its actions to gonkad's top-level sub-commands."""
    common, derivation = _parent_flags()
    keys = subparsers.add_parser("keys", help="manage the local keyring (BIP-39 mnemonics, Cosmos HD path)")
    actions = keys.add_subparsers(dest="keys_action", required=True)
    _add_create_actions(actions, common, derivation)
    _add_stored_key_actions(actions, common)
    _add_bls_actions(actions)


def _parent_flags() -> tuple[argparse.ArgumentParser, argparse.ArgumentParser]:
    """The flags every action shares (home, keyring backend, output), and the HD derivation flags."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--home", default=str(DEFAULT_HOME))
    common.add_argument(
        "--keyring-backend",
        choices=["test", "file"],
        default="file",
        help="file: encrypted with a passphrase; test: unencrypted, for localnets",
    )
    common.add_argument("--output", "-o", choices=["json", "text"], default="text")
    derivation = argparse.ArgumentParser(add_help=False)
    derivation.add_argument("--account", type=int, help="BIP-44 account (default 0)")
    derivation.add_argument("--index", type=int, help="BIP-44 address index (default 0)")
    derivation.add_argument("--hd-path", help=f"full BIP-32 path (default {hd.DEFAULT_HD_PATH})")
    return common, derivation


def _add_create_actions(
    actions: argparse._SubParsersAction, common: argparse.ArgumentParser, derivation: argparse.ArgumentParser
) -> None:
    """``add`` and ``recover``: a new key, from a fresh mnemonic or a given one."""
    p = actions.add_parser("add", parents=[common, derivation], help="create a key and print its mnemonic once")
    p.add_argument("name")
    p.add_argument("--recover", action="store_true", help="read the mnemonic from stdin instead")
    p.set_defaults(func=cmd_add)

    p = actions.add_parser("recover", parents=[common, derivation], help="re-create a key from a mnemonic on stdin")
    p.add_argument("name")
    p.set_defaults(func=cmd_add, recover=True)


def _add_stored_key_actions(actions: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """``list``, ``show``, ``delete``, ``export`` and ``import``: the keys the keyring holds."""
    p = actions.add_parser("list", parents=[common], help="all keys, by name")
    p.set_defaults(func=cmd_list)

    p = actions.add_parser("show", parents=[common], help="one key, by name or address")
    p.add_argument("name")
    only = p.add_mutually_exclusive_group()
    only.add_argument("--address", "-a", action="store_true", help="print only the address")
    only.add_argument("--pubkey", "-p", action="store_true", help="print only the public key")
    p.set_defaults(func=cmd_show)

    p = actions.add_parser("delete", parents=[common], help="remove a key (its mnemonic still recovers it)")
    p.add_argument("name")
    p.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    p.set_defaults(func=cmd_delete)

    p = actions.add_parser("export", parents=[common], help="print a key as a passphrase-encrypted armored block")
    p.add_argument("name")
    p.set_defaults(func=cmd_export)

    p = actions.add_parser("import", parents=[common], help="store a key from an `export` block in FILE")
    p.add_argument("name")
    p.add_argument("file")
    p.set_defaults(func=cmd_import)


def _add_bls_actions(actions: argparse._SubParsersAction) -> None:
    """``bls show``: the node's BLS key, which lives in the node's home, not in the keyring."""
    bls_actions = actions.add_parser("bls", help="the node's BLS key (HOME/config/bls_key.json)").add_subparsers(
        dest="bls_action", required=True
    )
    p = bls_actions.add_parser("show", help="the BLS public key and proof of possession, hex, as JSON")
    p.add_argument("--home", default=str(DEFAULT_HOME))
    p.set_defaults(func=cmd_bls_show)
