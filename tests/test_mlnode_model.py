"""The model runtime: tokenizer, cache paths agreeing with the full pass, weights and identity,
replayable sampling and stop sequences."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from mlnode import tokenizer
from mlnode.config import PRESETS, ModelConfig, preset
from mlnode.generate import GenerationRequest, generate
from mlnode.model import KVCache, Transformer
from mlnode.sampling import SamplingParams, choose, uniform
from mlnode.weights import load_model, random_model, save_model, weights_sha256


@pytest.fixture(scope="module")
def tiny() -> Transformer:
    return random_model("tiny", 3).model


def test_preset_sizes() -> None:
    counts = {name: sum(p.numel() for p in Transformer(cfg).parameters()) for name, cfg in PRESETS.items()}
    assert counts == {name: cfg.parameter_count() for name, cfg in PRESETS.items()}
    assert 0.9e6 <= counts["tiny"] <= 1.2e6
    assert 24e6 <= counts["base"] <= 27e6
    with pytest.raises(ValueError, match="unknown preset"):
        preset("huge")


def test_tokenizer_round_trip_and_template() -> None:
    text = "héllo, wörld ✓"
    assert tokenizer.decode(tokenizer.encode(text)) == text
    ids = tokenizer.chat_prompt([("system", "be brief"), ("user", "hi")])
    assert ids == [tokenizer.BOS, 258, *b"be brief", tokenizer.EOT, 259, *b"hi", tokenizer.EOT, tokenizer.ASSISTANT]
    assert tokenizer.decode(ids) == "be briefhi"
    for token in (0, 65, 200, tokenizer.EOT, tokenizer.ASSISTANT):
        assert tokenizer.token_from_bytes(tokenizer.token_bytes(token), tokenizer.token_text(token)) == token
    with pytest.raises(ValueError):
        tokenizer.token_from_bytes([1, 2], "xy")
    with pytest.raises(ValueError, match="unknown role"):
        tokenizer.chat_prompt([("robot", "hi")])


def test_prefill_and_batched_decode_match_full_pass(tiny: Transformer) -> None:
    """The KV-cache paths compute the same function as one causal pass, including when three
    sequences of different lengths decode in one batch."""
    torch.manual_seed(0)
    prompts = [torch.randint(0, 256, (n,)) for n in (5, 17, 9)]
    cache = KVCache.empty(tiny.config, slots=3)
    with torch.inference_mode():
        for slot, prompt in enumerate(prompts):
            last = tiny.prefill(prompt, cache, slot)
            assert torch.allclose(last, tiny(prompt[None])[0, -1], atol=1e-5)
        nxt = torch.tensor([7, 8, 9])
        positions = torch.tensor([len(p) for p in prompts])
        batched = tiny.decode(nxt, positions, cache)
        for row, prompt in enumerate(prompts):
            full = tiny(torch.cat([prompt, nxt[row : row + 1]])[None])[0, -1]
            assert torch.allclose(batched[row], full, atol=1e-5)
        cache.move(source=2, target=0, length=len(prompts[2]) + 1)
        moved = tiny.decode(torch.tensor([10]), torch.tensor([len(prompts[2]) + 1]), cache)
        full = tiny(torch.cat([prompts[2], torch.tensor([9, 10])])[None])[0, -1]
        assert torch.allclose(moved[0], full, atol=1e-5)


def test_weights_round_trip_and_identity(tmp_path: Path) -> None:
    loaded = random_model("tiny", 5)
    assert random_model("tiny", 5).sha256 == loaded.sha256
    assert random_model("tiny", 6).sha256 != loaded.sha256
    sha = save_model(loaded.model, tmp_path / "m", loaded.name)
    again = load_model(tmp_path / "m")
    assert (again.sha256, again.identity) == (sha, loaded.identity)
    assert again.identity == f"tiny-seed5@sha256:{sha}"
    tampered = {k: v.clone() for k, v in loaded.model.state_dict().items()}
    tampered["norm.weight"][0] += 1e-3
    assert weights_sha256(tampered) != sha
    body = json.loads((tmp_path / "m" / "config.json").read_text())
    body["sha256"] = "0" * 64
    (tmp_path / "m" / "config.json").write_text(json.dumps(body))
    with pytest.raises(ValueError, match="does not match"):
        load_model(tmp_path / "m")


def test_sampling_is_replayable_and_respects_top_p() -> None:
    logits = torch.tensor([3.0, 2.9, 0.0, -1.0] + [-50.0] * 260)
    greedy = choose(logits, SamplingParams(temperature=0.0), 0)
    assert greedy.token == 0 and greedy.margin == pytest.approx(0.1, abs=1e-6)
    params = SamplingParams(temperature=1.0, top_p=0.5, seed=11)
    assert {choose(logits, params, i).token for i in range(200)} == {0}
    wide = SamplingParams(temperature=1.0, top_p=1.0, seed=11)
    picks = [choose(logits, wide, i).token for i in range(400)]
    assert picks == [choose(logits, wide, i).token for i in range(400)]
    assert {0, 1} <= set(picks) and set(picks) <= {0, 1, 2, 3}
    assert 0.0 <= uniform(11, 0) < 1.0 and uniform(11, 0) != uniform(12, 0)
    special = torch.zeros(264)
    special[tokenizer.ASSISTANT] = 100.0
    assert choose(special, SamplingParams(temperature=0.0), 0).token != tokenizer.ASSISTANT


def test_generation_is_deterministic_and_stops(tiny: Transformer) -> None:
    prompt = tokenizer.chat_prompt([("user", "count to ten")])
    runs = [
        generate(tiny, GenerationRequest(prompt, 40, SamplingParams(0.8, 0.95, seed), top_logprobs=3))
        for seed in range(40, 48)
    ]
    for run in runs:
        assert (run.finish_reason == "length") == (len(run.tokens) == 40), run.finish_reason
    first = next(run for run in runs if run.finish_reason == "length")
    request = first.request
    second = generate(tiny, request)
    assert first.tokens == second.tokens and first.logprobs == second.logprobs
    assert all(len(lp.top) == 3 and lp.top[0][1] >= lp.top[-1][1] for lp in first.logprobs)
    stop = bytes(first.tokens[10:12])
    cut = bytes(first.tokens).find(stop)
    stopped = generate(tiny, GenerationRequest(prompt, 40, request.sampling, stop=(stop,)))
    assert stopped.finish_reason == "stop" and stopped.tokens == first.tokens[:cut]
    with pytest.raises(ValueError, match="exceeds the context"):
        generate(tiny, GenerationRequest(prompt, tiny.config.max_seq_len, request.sampling))


def test_config_rejects_unknown_fields() -> None:
    with pytest.raises(ValueError):
        ModelConfig.model_validate({"dim": 64, "bogus": 1})
