"""Keys: BIP-32/BIP-39 against published vectors, the keyring in both backends, and ``gonkad keys``."""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import bech32 as bech32_pkg
import pytest

from gonkad.cmd import keys as keys_cli
from sdk.crypto import bech32, secp256k1
from sdk.keyring import hd
from sdk.keyring import keyring as keyring_module
from sdk.keyring.keyring import Keyring, KeyringError, generate_test_keys

ROOT = Path(__file__).resolve().parent.parent
ABANDON = "abandon " * 11 + "about"
# cosmos-sdk's documented address for ABANDON on m/44'/118'/0'/0/0
ABANDON_COSMOS = "cosmos19rl4cm2hmr8afy4kldpxz3fka4jguq0auqdal4"

# BIP-32 test vector 1, ext prv of each chain, as printed in bip-0032.mediawiki
BIP32_SEED_1 = bytes.fromhex("000102030405060708090a0b0c0d0e0f")
BIP32_VECTOR_1 = [
    (
        "m",
        "xprv9s21ZrQH143K3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6cq3jPPqjiChkVvvNKmPGJxWUtg6LnF5kejMRNNU3TGtRBeJgk33yuGBxrMPHi",
    ),
    (
        "m/0H",
        "xprv9uHRZZhk6KAJC1avXpDAp4MDc3sQKNxDiPvvkX8Br5ngLNv1TxvUxt4cV1rGL5hj6KCesnDYUhd7oWgT11eZG7XnxHrnYeSvkzY7d2bhkJ7",
    ),
    (
        "m/0H/1",
        "xprv9wTYmMFdV23N2TdNG573QoEsfRrWKQgWeibmLntzniatZvR9BmLnvSxqu53Kw1UmYPxLgboyZQaXwTCg8MSY3H2EU4pWcQDnRnrVA1xe8fs",
    ),
    (
        "m/0H/1/2H",
        "xprv9z4pot5VBttmtdRTWfWQmoH1taj2axGVzFqSb8C9xaxKymcFzXBDptWmT7FwuEzG3ryjH4ktypQSAewRiNMjANTtpgP4mLTj34bhnZX7UiM",
    ),
    (
        "m/0H/1/2H/2",
        "xprvA2JDeKCSNNZky6uBCviVfJSKyQ1mDYahRjijr5idH2WwLsEd4Hsb2Tyh8RfQMuPh7f7RtyzTtdrbdqqsunu5Mm3wDvUAKRHSC34sJ7in334",
    ),
    (
        "m/0H/1/2H/2/1000000000",
        "xprvA41z7zogVVwxVSgdKUHDy1SKmdb533PjDz7J6N6mV6uS3ze1ai8FHa8kmHScGpWmj4WggLyQjgPie1rFSruoUihUZREPSL39UNdE3BBDu76",
    ),
]
_B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def _decode_xprv(xprv: str) -> tuple[int, int, bytes, bytes]:
    """(depth, child number, chain code, secret) of a Base58Check xprv, checksum verified."""
    number = 0
    for char in xprv:
        number = number * 58 + _B58.index(char)
    raw = number.to_bytes(82, "big")
    payload, checksum = raw[:78], raw[78:]
    assert hashlib.sha256(hashlib.sha256(payload).digest()).digest()[:4] == checksum
    assert payload[:4] == bytes.fromhex("0488ade4") and payload[45] == 0
    return payload[4], int.from_bytes(payload[9:13], "big"), payload[13:45], payload[46:]


# --- hd -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("path", "xprv"), BIP32_VECTOR_1)
def test_bip32_vector_1(path: str, xprv: str) -> None:
    depth, child, chain_code, secret = _decode_xprv(xprv)
    indexes = hd.parse_path(path)
    assert depth == len(indexes) and child == (indexes[-1] if indexes else 0)
    assert hd.derive_from_seed(BIP32_SEED_1, path) == (secret, chain_code)


def test_bip39_seed_with_passphrase() -> None:
    """BIP-39 reference vector (passphrase TREZOR): the optional passphrase changes the seed."""
    assert hd.mnemonic_to_seed(ABANDON, "TREZOR").hex() == (
        "c55257c360c07c72029aebc1b53c05ed0362ada38ead3e3e9efa3708e53495531f"
        "09a6987599d18264c1e1c92f2cf141630c7a3c4ab7c81b2f001698e7463b04"
    )
    assert hd.derive_private_key(ABANDON, "TREZOR").secret != hd.derive_private_key(ABANDON).secret


def test_cosmos_vector_same_bytes_as_cosmos_address() -> None:
    hrp, data = bech32_pkg.bech32_decode(ABANDON_COSMOS)
    assert hrp == "cosmos"
    cosmos_bytes = bytes(bech32_pkg.convertbits(data, 5, 8, False))
    key = hd.derive_private_key(ABANDON, path=hd.hd_path(0, 0))
    assert secp256k1.address_bytes(key.public_key) == cosmos_bytes
    assert bech32.decode(bech32.encode(cosmos_bytes)) == cosmos_bytes


def test_other_account_and_index_give_other_keys() -> None:
    default = hd.derive_private_key(ABANDON).secret
    assert hd.derive_private_key(ABANDON, path=hd.hd_path(1, 0)).secret != default
    assert hd.derive_private_key(ABANDON, path=hd.hd_path(0, 1)).secret != default
    assert hd.derive_private_key(ABANDON, path="44'/118'/0'/0/0").secret == default


@pytest.mark.parametrize(
    "mnemonic",
    [
        "abandon " * 11 + "abandon",  # valid words, wrong checksum
        "abandon " * 11 + "zoo",
        "abandon " * 10 + "about",  # 11 words
        "abandon " * 11 + "aboutt",  # not a wordlist word
    ],
)
def test_bad_mnemonic_rejected(mnemonic: str) -> None:
    with pytest.raises(ValueError, match="invalid mnemonic"):
        hd.mnemonic_to_seed(mnemonic)


def test_generated_mnemonic_is_24_valid_words() -> None:
    phrase = hd.generate_mnemonic()
    assert len(phrase.split()) == 24 and hd.normalize_mnemonic(phrase) == phrase
    assert phrase != hd.generate_mnemonic()


@pytest.mark.parametrize("path", ["", "m/", "m//0", "m/44'/x", "m/2147483648", "m/1''", "n/0"])
def test_bad_path_rejected(path: str) -> None:
    with pytest.raises(ValueError, match="invalid HD path"):
        hd.parse_path(path)


def test_parse_path_hardened_notations() -> None:
    assert hd.parse_path("m/44'/118h/0H/0/7") == [44 | hd.HARDENED, 118 | hd.HARDENED, hd.HARDENED, 0, 7]
    assert hd.parse_path("m") == []


@pytest.mark.parametrize("tweak", ["order", "negated-parent"])
def test_invalid_child_key_rejected(monkeypatch: pytest.MonkeyPatch, tweak: str) -> None:
    """I_L >= n, or a child key of zero, must be refused, not reduced into some other key."""
    parent = (5).to_bytes(32, "big")
    il = secp256k1.ORDER if tweak == "order" else secp256k1.ORDER - 5
    monkeypatch.setattr(hd, "_hmac_sha512", lambda key, data: il.to_bytes(32, "big") + bytes(32))
    with pytest.raises(ValueError, match="invalid BIP-32 child key"):
        hd.ckd_priv(parent, bytes(32), 0)


def test_invalid_master_key_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hd, "_hmac_sha512", lambda key, data: bytes(64))
    with pytest.raises(ValueError, match="invalid BIP-32 master key"):
        hd.master_key(BIP32_SEED_1)


# --- keyring --------------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def cheap_scrypt(monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process keyrings use a small scrypt cost: it is stored with each record, so decryption still
    reads it back; the subprocess test keeps the real cost."""
    monkeypatch.setattr(keyring_module, "SCRYPT_N", 2**10)


def _keyring(home: Path, backend: str, passphrase: str = "correct horse") -> Keyring:
    return Keyring(home, backend, passphrase if backend == "file" else None)


@pytest.mark.parametrize("backend", ["test", "file"])
def test_keyring_round_trip(tmp_path: Path, backend: str) -> None:
    keyring = _keyring(tmp_path, backend)
    alice, mnemonic = keyring.add("alice")
    assert len(mnemonic.split()) == 24 and alice.address.startswith("gonka1")
    carol = keyring.recover("carol", ABANDON)
    assert bech32.decode(carol.address) == bech32.decode(ABANDON_COSMOS, "cosmos")
    bob, _ = keyring.add("bob", ABANDON, hd_path=hd.hd_path(0, 1))
    assert [k.name for k in keyring.list()] == ["alice", "bob", "carol"]
    assert keyring.get("alice") == alice and keyring.get(carol.address) == carol

    reopened = _keyring(tmp_path, backend)
    assert reopened.private_key("alice").public_key == alice.pubkey
    assert _keyring(tmp_path / "elsewhere", backend).recover("alice", mnemonic) == alice
    message = b"gonka sign bytes"
    signature = reopened.private_key("carol").sign(message)
    assert secp256k1.verify(carol.pubkey, message, signature)
    assert not secp256k1.verify(alice.pubkey, message, signature)

    armored = keyring.export("carol", "export pw")
    assert armored.startswith("-----BEGIN GONKA PRIVATE KEY-----")
    keyring.delete("carol")
    with pytest.raises(KeyringError, match="not found"):
        keyring.get("carol")
    assert keyring.import_key("carol", armored, "export pw") == carol
    assert keyring.private_key("carol").secret == hd.derive_private_key(ABANDON).secret

    for stored in (tmp_path / f"keyring-{backend}").iterdir():
        text = stored.read_text()
        assert "abandon" not in text and mnemonic.split()[0] + " " not in text
        assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / f"keyring-{backend}").stat().st_mode) == 0o700


def test_file_backend_encrypts_and_wants_the_right_passphrase(tmp_path: Path) -> None:
    keyring = _keyring(tmp_path, "file")
    info = keyring.recover("carol", ABANDON)
    secret_hex = hd.derive_private_key(ABANDON).secret.hex()
    assert secret_hex not in (tmp_path / "keyring-file" / "carol.json").read_text()

    with pytest.raises(KeyringError, match="wrong passphrase"):
        Keyring(tmp_path, "file", "wrong horse")
    with pytest.raises(KeyringError, match="needs a passphrase"):
        Keyring(tmp_path, "file").private_key("carol")
    assert Keyring(tmp_path, "file").get("carol") == info  # public data needs no passphrase

    (tmp_path / "keyring-file" / "keyhash").unlink()  # even without the keyring check: an error, never garbage
    with pytest.raises(KeyringError, match="wrong passphrase"):
        Keyring(tmp_path, "file", "wrong horse").private_key("carol")


def test_passphrase_prompt_is_lazy(tmp_path: Path) -> None:
    asked: list[int] = []

    def prompt() -> str:
        asked.append(1)
        return "correct horse"

    keyring = Keyring(tmp_path, "file", prompt)
    assert keyring.list() == [] and not asked
    keyring.recover("carol", ABANDON)
    keyring.private_key("carol")
    assert asked == [1]


def test_edited_record_is_refused(tmp_path: Path) -> None:
    keyring = _keyring(tmp_path, "file")
    keyring.recover("carol", ABANDON)
    bob, _ = keyring.add("bob")
    path = tmp_path / "keyring-file" / "carol.json"
    record = json.loads(path.read_text())
    record["crypto"] = json.loads((tmp_path / "keyring-file" / "bob.json").read_text())["crypto"]
    path.write_text(json.dumps(record))
    with pytest.raises(KeyringError, match="cannot decrypt key 'carol'"):
        keyring.private_key("carol")
    record["address"] = bob.address
    path.write_text(json.dumps(record))
    with pytest.raises(KeyringError, match="corrupted"):
        keyring.list()


@pytest.mark.parametrize("backend", ["test", "file"])
def test_keyring_errors(tmp_path: Path, backend: str) -> None:
    keyring = _keyring(tmp_path, backend)
    keyring.recover("carol", ABANDON)
    with pytest.raises(KeyringError, match="already exists"):
        keyring.add("carol")
    with pytest.raises(KeyringError, match="already in the keyring as key 'carol'"):
        keyring.recover("carol2", ABANDON)
    with pytest.raises(KeyringError, match="bad checksum"):
        keyring.add("dave", "abandon " * 11 + "abandon")
    with pytest.raises(KeyringError, match="invalid HD path"):
        keyring.add("dave", hd_path="m/x")
    for name in ("", "a/b", "x" * 65, "dave!"):
        with pytest.raises(KeyringError, match="invalid key name"):
            keyring.add(name)
    for missing in (keyring.get, keyring.private_key, keyring.delete):
        with pytest.raises(KeyringError, match="'nobody' not found"):
            missing("nobody")
    armored = keyring.export("carol", "export pw")
    with pytest.raises(KeyringError, match="wrong passphrase for the exported key"):
        _keyring(tmp_path / "other", backend).import_key("carol", armored, "not it")
    with pytest.raises(KeyringError, match="invalid armored key"):
        keyring.import_key("x", armored.replace("scrypt", "pbkdf2"), "export pw")
    with pytest.raises(KeyringError, match="unknown keyring backend"):
        Keyring(tmp_path, "os")


def test_generate_test_keys_is_idempotent(tmp_path: Path) -> None:
    names = ["val0", "val1", "faucet"]
    first = generate_test_keys(tmp_path, names)
    assert list(first) == names and len(set(first.values())) == 3
    again = generate_test_keys(tmp_path, names + ["val2"])
    test_keyring = Keyring(tmp_path, "test")
    assert again == {**first, "val2": test_keyring.get("val2").address}
    assert test_keyring.private_key("faucet").public_key == test_keyring.get("faucet").pubkey


# --- gonkad keys ----------------------------------------------------------------------------------


def _gonkad(home: Path, *args: str, stdin: str = "", backend: str = "file") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GONKA_KEYRING_PASSPHRASE": "correct horse", "GONKA_EXPORT_PASSPHRASE": "export pw"}
    return subprocess.run(
        [sys.executable, "-m", "gonkad", "keys", *args, "--home", str(home), "--keyring-backend", backend],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=60,
    )


def test_cli_subprocess(tmp_path: Path) -> None:
    """The wired ``python -m gonkad keys``: stdin mnemonic, env passphrase, JSON out, one-line errors."""
    recovered = _gonkad(tmp_path, "recover", "carol", "--output", "json", stdin=ABANDON + "\n")
    assert recovered.returncode == 0, recovered.stderr
    carol = json.loads(recovered.stdout)
    assert carol["type"] == "local" and "mnemonic" not in carol
    assert bech32.decode(carol["address"]) == bech32.decode(ABANDON_COSMOS, "cosmos")
    assert (
        Keyring(tmp_path, "file", "correct horse").private_key("carol").secret == hd.derive_private_key(ABANDON).secret
    )
    assert json.loads((tmp_path / "keyring-file" / "carol.json").read_text())["crypto"]["n"] == 2**15

    failed = _gonkad(tmp_path, "show", "nobody")
    assert (failed.returncode, failed.stdout) == (1, "")
    assert failed.stderr == f"Error: key 'nobody' not found in {tmp_path / 'keyring-file'}\n"


def _run_in_process(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="gonkad")
    keys_cli.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    args.func(args)


def test_cli_handlers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("GONKA_KEYRING_PASSPHRASE", "correct horse")
    monkeypatch.setenv("GONKA_EXPORT_PASSPHRASE", "export pw")
    home = ["--home", str(tmp_path)]

    _run_in_process(["keys", "add", "alice", "-o", "json", *home])
    alice = json.loads(capsys.readouterr().out)
    assert alice["type"] == "local" and len(alice["mnemonic"].split()) == 24
    _run_in_process(["keys", "add", "bob", *home])
    text = capsys.readouterr().out
    assert "name: bob" in text and "**Important**" in text

    monkeypatch.setattr(sys, "stdin", io.StringIO(ABANDON + "\n"))
    _run_in_process(["keys", "add", "carol", "--recover", "--index", "1", *home])
    assert "name: carol" in capsys.readouterr().out
    carol = Keyring(tmp_path, "file", "correct horse").get("carol")
    assert (
        Keyring(tmp_path, "file", "correct horse").private_key("carol").secret
        == hd.derive_private_key(ABANDON, path="m/44'/118'/0'/0/1").secret
    )

    _run_in_process(["keys", "list", "-o", "json", *home])
    assert [k["name"] for k in json.loads(capsys.readouterr().out)] == ["alice", "bob", "carol"]
    _run_in_process(["keys", "show", carol.address, "--address", *home])
    assert capsys.readouterr().out == carol.address + "\n"
    _run_in_process(["keys", "show", "carol", "--pubkey", *home])
    assert json.loads(capsys.readouterr().out) == carol.as_dict()["pubkey"]

    _run_in_process(["keys", "export", "carol", *home])
    armored = tmp_path / "carol.armor"
    armored.write_text(capsys.readouterr().out)
    _run_in_process(["keys", "import", "carol", str(armored), "-o", "json", "--keyring-backend", "test", *home])
    assert json.loads(capsys.readouterr().out)["address"] == carol.address

    with pytest.raises(KeyringError, match="cannot be combined"):
        _run_in_process(["keys", "add", "dave", "--hd-path", "m/44'/118'/0'/0/0", "--account", "1", *home])
    with pytest.raises(KeyringError, match="cannot read"):
        _run_in_process(["keys", "import", "dave", str(tmp_path / "missing"), *home])
    monkeypatch.setattr(sys, "stdin", io.StringIO("n\n"))
    with pytest.raises(KeyringError, match="aborted"):
        _run_in_process(["keys", "delete", "carol", *home])
    _run_in_process(["keys", "delete", "carol", "-y", "--keyring-backend", "test", *home])
    capsys.readouterr()
    _run_in_process(["keys", "list", "--keyring-backend", "test", *home])
    assert capsys.readouterr().out == "No records were found in keyring\n"
