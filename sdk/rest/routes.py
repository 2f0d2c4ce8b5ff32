"""The REST routes of the services a node serves, read from their methods' ``google.api.http`` options.

Every method the gRPC server answers whose descriptor carries an HTTP rule (the Cosmos SDK's protos and
proto/gonka/ declare them) gets a route per binding, its ``additional_bindings`` included; nothing is listed by
hand. A request is matched against the routes of its HTTP method, most literal segments first.
"""

from __future__ import annotations

from dataclasses import dataclass

from google.api import annotations_pb2, http_pb2
from google.protobuf import descriptor_pool
from google.protobuf.message import Message

from sdk.grpc.methods import ContextHandler, ContextMethods
from sdk.rest.template import PathTemplate, parse_template

_VERBS = ("get", "put", "post", "delete", "patch")


@dataclass(frozen=True)
class Route:
    verb: str
    path: PathTemplate
    body: str
    """Where the request body goes: "" (no body), "*" (the whole request) or a field path."""
    service: str
    method: str
    request_type: type[Message]
    handler: ContextHandler


def _bindings(rule: http_pb2.HttpRule) -> list[tuple[str, str, str]]:
    """(verb, template, body) of ``rule`` and of each of its additional bindings."""
    out = []
    for binding in (rule, *rule.additional_bindings):
        kind = binding.WhichOneof("pattern")
        if kind == "custom":
            out.append((binding.custom.kind.upper(), binding.custom.path, binding.body))
        elif kind in _VERBS:
            out.append((kind.upper(), getattr(binding, kind), binding.body))
    return out


def build_routes(services: dict[str, ContextMethods]) -> dict[str, list[Route]]:
    """HTTP method -> its routes, most specific first; ValueError if two methods claim one route."""
    pool = descriptor_pool.Default()
    table: dict[str, list[Route]] = {}
    for name, methods in sorted(services.items()):
        service = pool.FindServiceByName(name)
        for method_name, (request_type, handler) in sorted(methods.items()):
            options = service.methods_by_name[method_name].GetOptions()
            if not options.HasExtension(annotations_pb2.http):
                continue
            for verb, template, body in _bindings(options.Extensions[annotations_pb2.http]):
                route = Route(verb, parse_template(template), body, name, method_name, request_type, handler)
                table.setdefault(verb, []).append(route)
    for verb, routes in table.items():
        routes.sort(key=lambda r: (-r.path.literals, r.path.template))
        seen: dict[str, Route] = {}
        for route in routes:
            other = seen.setdefault(route.path.pattern.pattern, route)
            if other is not route:
                raise ValueError(
                    f"{verb} {route.path.template} is both {other.service}/{other.method} "
                    f"and {route.service}/{route.method}"
                )
    return table


def find_route(table: dict[str, list[Route]], verb: str, raw_path: str) -> tuple[Route, dict[str, str]] | None:
    """The route ``verb raw_path`` calls and the path's field values; None if no route matches."""
    for route in table.get(verb, ()):
        values = route.path.match(raw_path)
        if values is not None:
            return route, values
    return None
