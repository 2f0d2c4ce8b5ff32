"""The Transfer Agent (TA): signed OpenAI-compatible requests, routed to ML nodes, started on chain
(``agent/README.md``)."""
