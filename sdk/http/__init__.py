"""What the project's HTTP programs (the Transfer Agent, ``agent/``; a host's executor proxy, ``host/``) serve and
call with, one concern a file:

- ``asgi.py``: the ASGI types, ``read_body``, ``send_json``, ``send_error``, ``uvicorn_config``;
- ``errors.py``: OpenAI's error body (``ApiError``) and the refusals both make;
- ``signed.py``: signed requests' headers, and the request a TA forwards to a host (``forward_headers``,
  ``check_forwarded``);
- ``upstream.py``: the small keep-alive HTTP/1.1 client both call ML nodes with (``Pool``).
"""
