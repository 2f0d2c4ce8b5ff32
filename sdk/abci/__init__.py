"""ABCI 2.0 socket server and base application for running under CometBFT v0.38."""

from .application import Application
from .framing import DEFAULT_MAX_FRAME, FrameDecoder, FrameError, encode_frame
from .server import ABCIServer, run

__all__ = [
    "ABCIServer",
    "Application",
    "DEFAULT_MAX_FRAME",
    "FrameDecoder",
    "FrameError",
    "encode_frame",
    "run",
]
