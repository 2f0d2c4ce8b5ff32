"""The verifier's tolerance across implementations: other correct implementations of the model pass,
another model or a forged answer fails, the score stays in [0, 1], and bad tolerances are refused."""

from __future__ import annotations

import copy
import math
from collections.abc import Iterator
from dataclasses import replace

import pytest
import torch
from pydantic import ValidationError

from mlnode import forgery
from mlnode.config import preset
from mlnode.generate import GenerationRequest, Sequence, TokenChoice, generate
from mlnode.model import Transformer
from mlnode.sampling import SamplingParams
from mlnode.tokenizer import chat_prompt
from mlnode.verify import (
    PRESET_TOLERANCES,
    THRESHOLD,
    Reason,
    Tolerances,
    teacher_forced,
    tolerances_for,
    verify_sequence,
)
from mlnode.verify_chat import VerifyRequest
from mlnode.weights import random_model

PROMPTS = [chat_prompt([("user", text)]) for text in ("Hello there.", "Name a colour.", "Count to five.")]


@pytest.fixture(scope="module", autouse=True)
def one_thread() -> Iterator[None]:
    with forgery.torch_threads(1):
        yield


@pytest.fixture(scope="module")
def model() -> Transformer:
    return random_model("tiny", 1).model


@pytest.fixture(scope="module")
def answers(model: Transformer) -> list[Sequence]:
    """Honest answers, greedy and sampled, with top-5 logprobs."""
    samplings = [SamplingParams(0.0), SamplingParams(1.0, 1.0, 3), SamplingParams(0.7, 0.9, 4)]
    return [
        generate(model, GenerationRequest(prompt, 20, sampling, top_logprobs=5))
        for prompt in PROMPTS
        for sampling in samplings
    ]


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float64])
def test_honest_answers_pass_on_other_implementations(
    model: Transformer, answers: list[Sequence], dtype: torch.dtype
) -> None:
    """Generated in float32 with a KV cache, re-executed in one pass with every weight and activation in
    another type: all match; bfloat16 moves the score visibly, so the tolerance is what lets it pass."""
    other = copy.deepcopy(model).to(dtype)
    verdicts = [verify_sequence(other, answer) for answer in answers]
    assert all(v.match for v in verdicts), [v for v in verdicts if not v.match][:2]
    if dtype == torch.bfloat16:
        assert min(v.score for v in verdicts) < 0.999


def test_honest_answers_pass_on_two_threads_and_with_autocast(model: Transformer, answers: list[Sequence]) -> None:
    with forgery.torch_threads(2):
        assert all(verify_sequence(model, answer).match for answer in answers)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert all(verify_sequence(model, answer).match for answer in answers)


@pytest.mark.parametrize("kind", ["other_seed", "fewer_layers"])
def test_another_model_fails(model: Transformer, kind: str) -> None:
    if kind == "other_seed":
        other = Transformer(model.config).init_weights(2).eval()
    else:
        other = copy.deepcopy(model)
        other.layers = other.layers[:-1]
    for prompt in PROMPTS:
        answer = generate(other, GenerationRequest(prompt, 20, SamplingParams(0.0), top_logprobs=5))
        verdict = verify_sequence(model, answer)
        assert not verdict.match and verdict.score < 0.3 and Reason.LOW_SCORE in verdict.reasons


def test_altered_token_fails_even_with_true_logprobs(model: Transformer, answers: list[Sequence]) -> None:
    for answer in answers:
        tokens = list(answer.tokens)
        tokens[10] = (tokens[10] + 128) % 256
        claims = forgery.reported(teacher_forced(model, answer.request.prompt, tokens), tokens, 5)
        verdict = verify_sequence(model, Sequence(answer.request, tokens, claims, answer.finish_reason))
        assert not verdict.match and Reason.TOKEN in verdict.reasons and 10 in verdict.failed_positions


@pytest.mark.parametrize("sigma", [0.02, 0.1, 1.0])
def test_forged_logprob_list_fails(model: Transformer, answers: list[Sequence], sigma: float) -> None:
    generator = torch.Generator().manual_seed(5)
    for answer in answers:
        forged = [
            TokenChoice(
                c.token,
                c.logprob + sigma * float(torch.randn(1, generator=generator)),
                tuple((i, v + sigma * float(torch.randn(1, generator=generator))) for i, v in c.top),
            )
            for c in answer.logprobs
        ]
        verdict = verify_sequence(model, replace(answer, logprobs=forged))
        assert not verdict.match and Reason.LOW_SCORE in verdict.reasons


@pytest.mark.parametrize("value", [0.0, 50.0, -1e30, math.nan, math.inf, -math.inf])
def test_score_lies_in_unit_interval(model: Transformer, answers: list[Sequence], value: float) -> None:
    """Whatever numbers are claimed, the score is in [0, 1]: garbage scores 0."""
    answer = answers[0]
    garbage = [TokenChoice(c.token, value, tuple((i, value) for i, _ in c.top)) for c in answer.logprobs]
    verdict = verify_sequence(model, replace(answer, logprobs=garbage))
    assert verdict.score == 0.0 and not verdict.match
    honest = verify_sequence(model, answer)
    assert 0.999 < honest.score <= 1.0 and honest.threshold == THRESHOLD


def test_threshold_decides_and_defaults_per_preset(model: Transformer, answers: list[Sequence]) -> None:
    bf16 = copy.deepcopy(model).to(torch.bfloat16)
    verdict = verify_sequence(bf16, answers[1])
    assert verdict.match and not verify_sequence(bf16, answers[1], Tolerances(threshold=1.0)).match
    assert tolerances_for(model.config) == PRESET_TOLERANCES["tiny"]
    assert tolerances_for(preset("tiny").model_copy(update={"n_layers": 1})) == Tolerances()


@pytest.mark.parametrize(
    "fields", [{"threshold": 1.5}, {"threshold": -0.1}, {"scale": 0.0}, {"scale": math.nan}, {"slack": -1.0}]
)
def test_bad_tolerances_are_refused(fields: dict[str, float]) -> None:
    with pytest.raises(ValueError, match=next(iter(fields))):
        Tolerances(**fields)


@pytest.mark.parametrize("threshold", [1.5, -0.1, "high"])
def test_bad_threshold_in_the_request_is_refused(threshold: object) -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 1, "seed": 0}
    body |= {"finish_reason": "length", "logprobs": [], "threshold": threshold}
    with pytest.raises(ValidationError) as raised:
        VerifyRequest.model_validate(body)
    assert raised.value.errors()[0]["loc"] == ("threshold",)
