"""Honest and dishonest executors, for measuring how well re-execution tells them apart.

Every answer, honest or forged, is a ``Sequence`` (request, tokens, logprobs, finish reason): what an
executor hands in, so that both go through the same verifier call. ``corpus`` draws a labelled,
reproducible mix of them and ``judged`` verifies it; the verification tests and the bench share both.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from dataclasses import dataclass, replace

import torch
from torch import Tensor

from mlnode.generate import MAX_TOP_LOGPROBS, GenerationRequest, Sequence, TokenChoice, generate
from mlnode.model import Transformer
from mlnode.sampling import MAX_TEMPERATURE, SamplingParams
from mlnode.threads import torch_threads
from mlnode.tokenizer import chat_prompt
from mlnode.verify import InferenceVerdict, teacher_forced, verify_sequence

PROMPTS: tuple[tuple[tuple[str, str], ...], ...] = (
    (("user", "Hello!"),),
    (("user", "What is the capital of France?"),),
    (("system", "You are terse."), ("user", "Name three colours.")),
    (("user", "Write a haiku about the sea."),),
    (("user", "2 + 2 = ?"),),
    (("developer", "Answer in JSON."), ("user", "List two fruits.")),
    (("user", "Translate 'good morning' into German."),),
    (("user", "Tell me a story"), ("assistant", "Once upon a time"), ("user", "Go on.")),
    (("user", "Résumé en français, s'il vous plaît."),),
    (("system", "Be kind."), ("user", "Why is the sky blue? Explain briefly.")),
    (("user", "def fib(n):"),),
    (("user", "Count from one to ten."),),
)
SAMPLINGS: tuple[tuple[float, float], ...] = (
    (0.0, 1.0),
    (0.3, 1.0),
    (0.7, 0.9),
    (1.0, 1.0),
    (1.0, 0.5),
    (1.5, 0.95),
    (0.8, 0.3),
    (MAX_TEMPERATURE, 1.0),
)
"""(temperature, top_p) pairs; temperature 0 is greedy."""
TOP_LOGPROBS = (MAX_TOP_LOGPROBS, MAX_TOP_LOGPROBS, MAX_TOP_LOGPROBS, 2, 0)
NOISE = 1e-1
"""Relative noise on every weight of one block: a node serving other weights. (At 1e-2 a block's outputs
move less than bfloat16 arithmetic moves them: an honest implementation's difference, no longer caught.)"""

KINDS = (
    "other_seed",
    "noisy_block",
    "truncated_length",
    "truncated_stop",
    "swapped",
    "random_made_up",
    "random_true_logprobs",
    "max_temperature",
    "perturbed_logprobs",
    "copied_logprobs",
)
"""Dishonest kinds, in the order ``corpus`` lists them after "honest"."""


def random_request(rng: random.Random, lengths: tuple[int, int]) -> GenerationRequest:
    """A chat request with random prompt, sampling, top-k, max_tokens within ``lengths``, and sometimes
    stop sequences that rarely occur."""
    temperature, top_p = rng.choice(SAMPLINGS)
    stop = tuple(bytes(rng.randrange(32, 127) for _ in range(2)) for _ in range(rng.choice((0, 0, 1, 2))))
    return GenerationRequest(
        prompt=chat_prompt(rng.choice(PROMPTS)),
        max_tokens=rng.randint(*lengths),
        sampling=SamplingParams(temperature, top_p, rng.randrange(1 << 53)),
        stop=stop,
        top_logprobs=rng.choice(TOP_LOGPROBS),
    )


def honest_answer(model: Transformer, rng: random.Random, lengths: tuple[int, int]) -> Sequence:
    """One honest answer. A third of them get a stop sequence taken from their own first draft, so that
    the answer really ends at one."""
    request = random_request(rng, lengths)
    if rng.random() < 1 / 3:
        draft = generate(model, request).tokens
        if draft:
            start = rng.randrange(len(draft))
            request = replace(request, stop=(bytes(draft[start : start + rng.randint(1, 3)]), *request.stop))
    return generate(model, request)


def noisy_copy(model: Transformer, layer: int, relative: float, seed: int) -> Transformer:
    """The same weights but every parameter of one block multiplied by (1 + relative·N(0, 1))."""
    noisy = copy.deepcopy(model)
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for param in noisy.layers[layer].parameters():
            param.mul_(1 + relative * torch.randn(param.shape, generator=generator))
    return noisy


def reported(logprobs: Tensor, tokens: list[int], top: int) -> list[TokenChoice]:
    """What an executor reports for ``tokens`` given the logprobs [len(tokens), vocab] it computed."""
    values, ids = torch.topk(logprobs, top, dim=1)
    return [
        TokenChoice(token, float(row[token]), tuple((int(i), float(v)) for i, v in zip(row_ids, row_values)))
        for token, row, row_ids, row_values in zip(tokens, logprobs, ids, values)
    ]


def truncated(answer: Sequence, keep: int, finish_reason: str) -> Sequence:
    return Sequence(answer.request, answer.tokens[:keep], answer.logprobs[:keep], finish_reason)


@dataclass
class Forger:
    """Makes dishonest answers of each kind, from its own models and a pool of honest answers."""

    model: Transformer
    other: Transformer
    noisy: list[Transformer]
    honest: list[Sequence]
    rng: random.Random
    lengths: tuple[int, int]

    @classmethod
    def around(cls, model: Transformer, honest: list[Sequence], lengths: tuple[int, int], seed: int) -> Forger:
        """Weights of init seed ``seed + 1`` and one noisy copy per block of ``model``."""
        other = Transformer(model.config).init_weights(seed + 1).eval()
        if torch.equal(other.output.weight, model.output.weight):
            raise ValueError(f"seed {seed}: seed + 1 is the model's own init seed; pick another")
        noisy = [noisy_copy(model, layer, NOISE, seed + layer) for layer in range(model.config.n_layers)]
        return cls(model, other, noisy, [answer for answer in honest if answer.tokens], random.Random(seed), lengths)

    def forge(self, kind: str) -> Sequence:
        makers: dict[str, Callable[[], Sequence]] = {
            "other_seed": lambda: generate(self.other, random_request(self.rng, self.lengths)),
            "noisy_block": lambda: generate(self.rng.choice(self.noisy), random_request(self.rng, self.lengths)),
            "truncated_length": lambda: self._truncated("length"),
            "truncated_stop": lambda: self._truncated("stop"),
            "swapped": self._swapped,
            "random_made_up": lambda: self._random(true_logprobs=False),
            "random_true_logprobs": lambda: self._random(true_logprobs=True),
            "max_temperature": self._max_temperature,
            "perturbed_logprobs": self._perturbed,
            "copied_logprobs": self._copied,
        }
        return makers[kind]()

    def _base(self) -> Sequence:
        return self.rng.choice(self.honest)

    def _truncated(self, finish_reason: str) -> Sequence:
        base = self._base()
        return truncated(base, self.rng.randrange(len(base.tokens)), finish_reason)

    def _swapped(self) -> Sequence:
        """The honest answer to another prompt, claimed for this one with the same parameters."""
        base = self._base()
        prompt = self.rng.choice([p for p in map(chat_prompt, PROMPTS) if p != base.request.prompt])
        return Sequence(replace(base.request, prompt=prompt), base.tokens, base.logprobs, base.finish_reason)

    def _random(self, true_logprobs: bool, sampling: SamplingParams | None = None) -> Sequence:
        """Random bytes, as many as allowed ("length") or fewer but at least one ("stop"); logprobs made up,
        or the true teacher-forced ones (the strongest forger: only the tokens are wrong). ``sampling``
        replaces the request's drawn one."""
        request = random_request(self.rng, self.lengths)
        if sampling is not None:
            request = replace(request, sampling=sampling)
        full = self.rng.random() < 0.5
        count = request.max_tokens if full else self.rng.randrange(1, request.max_tokens)
        tokens = [self.rng.randrange(256) for _ in range(count)]
        if true_logprobs:
            logprobs = reported(teacher_forced(self.model, request.prompt, tokens), tokens, request.top_logprobs)
        else:
            logprobs = [self._made_up(token, request.top_logprobs) for token in tokens]
        return Sequence(request, tokens, logprobs, "length" if full else "stop")

    def _max_temperature(self) -> Sequence:
        """Random bytes with their true logprobs, claimed at the highest temperature a generator accepts,
        with no top-p cut: where the sampler is flattest. (Claimed at 1e16, such an answer once matched
        with score 1.0: there most tempered probabilities are exactly equal in float64, so every token
        sits in a run of near-ties spanning most of the vocabulary.)"""
        return self._random(True, SamplingParams(MAX_TEMPERATURE, 1.0, self.rng.randrange(1 << 53)))

    def _made_up(self, token: int, top: int) -> TokenChoice:
        values = sorted((self.rng.uniform(-6.0, -4.5) for _ in range(top)), reverse=True)
        return TokenChoice(token, self.rng.uniform(-7.0, -4.0), tuple(zip(self.rng.sample(range(256), top), values)))

    def _perturbed(self) -> Sequence:
        """Honest tokens; every logprob moved by N(0, σ), σ log-uniform in [1e-2, 1e-1]. (Below ~5e-3 such
        a list is as close to the truth as an honest bfloat16 re-execution's, and passes.)"""
        base = self._base()
        scale = 10 ** self.rng.uniform(-2, -1)
        logprobs = [
            TokenChoice(
                t.token,
                t.logprob + self.rng.gauss(0, scale),
                tuple((i, v + self.rng.gauss(0, scale)) for i, v in t.top),
            )
            for t in base.logprobs
        ]
        return Sequence(base.request, base.tokens, logprobs, base.finish_reason)

    def _copied(self) -> Sequence:
        """Honest tokens; logprobs from another model's teacher-forced pass."""
        base = self._base()
        request = base.request
        forced = teacher_forced(self.other, request.prompt, base.tokens)
        return Sequence(request, base.tokens, reported(forced, base.tokens, request.top_logprobs), base.finish_reason)


def corpus(
    model: Transformer, honest: int, per_kind: int, lengths: tuple[int, int], seed: int
) -> dict[str, list[Sequence]]:
    """``honest`` honest answers and ``per_kind`` answers of each dishonest kind, with max_tokens within
    ``lengths``, keyed "honest" and then by ``KINDS``."""
    rng = random.Random(seed)
    answers = [honest_answer(model, rng, lengths) for _ in range(honest)]
    forger = Forger.around(model, answers, lengths, seed)
    return {"honest": answers, **{kind: [forger.forge(kind) for _ in range(per_kind)] for kind in KINDS}}


def judged(
    model: Transformer, answers: dict[str, list[Sequence]], every: int = 10
) -> dict[str, list[InferenceVerdict]]:
    """Verdicts on every answer, on one torch thread except every ``every``-th honest answer, verified on
    two: a thread count other than the generator's must not cost an honest answer its match (a forgery
    fails either way). Few run on two because with other processes busy on a 2-core machine two threads
    run ~10× slower."""
    honest = answers["honest"]
    with torch_threads(1):
        verdicts = {
            kind: [verify_sequence(model, answer) for answer in batch]
            for kind, batch in answers.items()
            if kind != "honest"
        }
        found = {i: verify_sequence(model, answer) for i, answer in enumerate(honest) if i % every}
    with torch_threads(2):
        found |= {i: verify_sequence(model, answer) for i, answer in enumerate(honest) if not i % every}
    return {"honest": [found[i] for i in range(len(honest))], **verdicts}
