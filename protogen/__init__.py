"""Python code generated from ``proto/gonka/**`` by ``proto/generate.py`` (``make install``) into
``protogen/gonka/``, never committed. This file is committed so that an editable install knows the package
before it is generated."""
