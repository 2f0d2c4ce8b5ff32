"""A Hugging Face model directory's tokenizer and chat template, without ``transformers``.

``tokenizer.json`` is read by the ``tokenizers`` library; the chat template (``tokenizer_config.json``'s
``chat_template``, or ``chat_template.jinja``) is rendered by jinja2 in the environment ``transformers``
uses: a sandbox with ``trim_blocks`` and ``lstrip_blocks``, the ``loopcontrols`` extension,
``raise_exception``, a ``tojson`` that keeps non-ASCII text, ``strftime_now``, and the special tokens
(``bos_token``, ``eos_token``, …) as variables. The rendered text is encoded without adding specials
again, as ``apply_chat_template`` does.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from jinja2.exceptions import TemplateError
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment
from tokenizers import Tokenizer

from mlnode.vocabulary import Vocabulary

TOKENIZER_FILE = "tokenizer.json"
TOKENIZER_CONFIG_FILE = "tokenizer_config.json"
TEMPLATE_FILE = "chat_template.jinja"
_SPECIALS = ("bos_token", "eos_token", "unk_token", "pad_token", "sep_token", "cls_token", "mask_token")


def _raise_exception(message: str) -> None:
    raise TemplateError(message)


def _tojson(
    value: Any, ensure_ascii: bool = False, indent: int | None = None, separators: Any = None, sort_keys: bool = False
) -> str:
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def _strftime_now(format: str) -> str:
    return datetime.now().strftime(format)


def _token_text(value: object) -> str | None:
    """A special token as ``tokenizer_config.json`` writes it: a string or an AddedToken dict."""
    if isinstance(value, Mapping):
        return str(value["content"])
    return value if isinstance(value, str) else None


def byte_symbols() -> list[str]:
    """GPT-2's printable stand-in for each byte, the alphabet of the ``ByteLevel`` pre-tokenizer."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    symbols, extra = {}, 0
    for byte in range(256):
        if byte in printable:
            symbols[byte] = chr(byte)
        else:
            symbols[byte] = chr(256 + extra)
            extra += 1
    return [symbols[byte] for byte in range(256)]


class HFTokenizer:
    """A model directory's ``tokenizer.json``, special tokens and chat template."""

    def __init__(self, directory: Path) -> None:
        self.tokenizer = Tokenizer.from_file(str(directory / TOKENIZER_FILE))
        settings_path = directory / TOKENIZER_CONFIG_FILE
        settings = json.loads(settings_path.read_text()) if settings_path.is_file() else {}
        self.specials = {key: text for key in _SPECIALS if (text := _token_text(settings.get(key))) is not None}
        template = settings.get("chat_template")
        if (directory / TEMPLATE_FILE).is_file():
            template = (directory / TEMPLATE_FILE).read_text()
        if isinstance(template, list):  # named templates: the default one is served
            template = next((t["template"] for t in template if t.get("name") == "default"), None)
        environment = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
        environment.filters["tojson"] = _tojson
        environment.globals["raise_exception"] = _raise_exception
        environment.globals["strftime_now"] = _strftime_now
        self.template = environment.from_string(template) if template else None
        eos = self.specials.get("eos_token")
        eos_id = self.tokenizer.token_to_id(eos) if eos is not None else None
        self.eos_ids: frozenset[int] = frozenset() if eos_id is None else frozenset({eos_id})
        self.byte_level = (json.loads(self.tokenizer.to_str()).get("decoder") or {}).get("type") == "ByteLevel"
        self._bytes = {symbol: byte for byte, symbol in enumerate(byte_symbols())}
        self._added = {token.content for token in self.tokenizer.get_added_tokens_decoder().values()}

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=False).ids)

    def render(self, messages: Sequence[Mapping[str, Any]], add_generation_prompt: bool = True) -> str:
        """The conversation as the chat template writes it."""
        if self.template is None:
            raise ValueError("the model directory has no chat template")
        return self.template.render(
            messages=list(messages),
            tools=None,
            documents=None,
            add_generation_prompt=add_generation_prompt,
            **self.specials,
        )

    def chat_prompt(self, messages: Sequence[Mapping[str, Any]]) -> list[int]:
        """Token ids of the conversation followed by the assistant's opening."""
        return self.encode(self.render(messages))

    def token_bytes(self, token_id: int) -> list[int]:
        """The bytes a byte-level token stands for; empty for an added (special) token."""
        piece = self.tokenizer.id_to_token(token_id)
        if piece is None or piece in self._added:
            return []
        return [self._bytes[symbol] for symbol in piece]

    def token_text(self, token_id: int) -> str:
        raw = self.token_bytes(token_id)
        return bytes(raw).decode("utf-8", errors="replace") if raw else str(self.tokenizer.id_to_token(token_id))

    def vocabulary(self, end: frozenset[int] = frozenset()) -> Vocabulary:
        """This tokenizer for generation and serving; ``end`` adds ids that end an answer to the eos token
        (``config.json``'s ``eos_token_id``). Only byte-level tokenizers (Llama 3, Qwen2) give every token
        its bytes, which stop sequences and logprobs need."""
        if not self.byte_level:
            raise ValueError("only byte-level tokenizers (a ByteLevel decoder in tokenizer.json) are served")
        return Vocabulary(
            chat_prompt=lambda messages: self.chat_prompt([{"role": r, "content": c} for r, c in messages]),
            token_bytes=self.token_bytes,
            token_text=self.token_text,
            end=self.eos_ids | end,
            generatable=None,
        )
