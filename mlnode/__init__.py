"""The ML node: a PyTorch model runtime behind an OpenAI-compatible API, the Sprint race, and
re-execution of other nodes' answers for verification."""
