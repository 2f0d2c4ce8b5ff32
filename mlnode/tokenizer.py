"""Byte-level tokenizer and chat template.

Ids 0–255 are raw bytes, so any text round-trips and no vocabulary file is needed; a handful of
special ids mark turns. A turn is ``<role> content <eot>``; generation starts after ``<assistant>`` and
ends at ``<eot>``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

BOS = 256
EOT = 257
ROLE_IDS = {"system": 258, "user": 259, "assistant": 260, "tool": 261, "developer": 258}
ASSISTANT = ROLE_IDS["assistant"]
VOCAB_SIZE = 264
SPECIAL_NAMES = {
    BOS: "<|bos|>",
    EOT: "<|eot|>",
    258: "<|system|>",
    259: "<|user|>",
    260: "<|assistant|>",
    261: "<|tool|>",
}


def encode(text: str) -> list[int]:
    return list(text.encode("utf-8"))


def decode(ids: Iterable[int]) -> str:
    """Text of the byte tokens; special ids are dropped, broken UTF-8 becomes U+FFFD."""
    return bytes(i for i in ids if i < 256).decode("utf-8", errors="replace")


def token_bytes(token_id: int) -> list[int]:
    """The bytes a token stands for (OpenAI's ``bytes`` field); empty for a special token."""
    return [token_id] if token_id < 256 else []


def token_text(token_id: int) -> str:
    """Display form of one token: its byte as text when that byte is valid UTF-8 on its own."""
    if token_id >= 256:
        return SPECIAL_NAMES.get(token_id, f"<|{token_id}|>")
    return bytes([token_id]).decode("utf-8", errors="replace")


def token_from_bytes(raw: Sequence[int], text: str) -> int:
    """Inverse of (token_bytes, token_text), for reading another node's logprobs back into ids."""
    if len(raw) == 1 and 0 <= raw[0] < 256:
        return raw[0]
    for token_id in range(256, VOCAB_SIZE):
        if text == token_text(token_id) and not raw:
            return token_id
    raise ValueError(f"not a token of the byte-level vocabulary: {text!r} {list(raw)}")


def chat_prompt(messages: Sequence[tuple[str, str]]) -> list[int]:
    """Token ids for (role, content) messages followed by the assistant's opening tag."""
    ids = [BOS]
    for role, content in messages:
        if role not in ROLE_IDS:
            raise ValueError(f"unknown role {role!r}")
        ids.append(ROLE_IDS[role])
        ids.extend(encode(content))
        ids.append(EOT)
    ids.append(ASSISTANT)
    return ids
