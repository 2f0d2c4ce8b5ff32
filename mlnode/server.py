"""The ML node's HTTP API: OpenAI's chat completions and model list, health and node info, the
Sprint race (``mlnode.sprint.routes``) and, for a local model, verification (``mlnode.verify_chat``).

``create_app`` puts a backend behind FastAPI. Every error, FastAPI's own validation and routing errors
included, leaves with OpenAI's error body, so any OpenAI client can read it. A body over the node's
limit is refused (413) before it is parsed (``mlnode.limits``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

from fastapi import APIRouter, FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, StreamingResponse
from starlette.background import BackgroundTask
from starlette.exceptions import HTTPException

from mlnode import nodeinfo
from mlnode.backend import Backend, ChunkStream
from mlnode.errors import APIError, invalid_request, server_error
from mlnode.limits import MIN_BODY_BYTES, BodyLimit
from mlnode.nodeinfo import Hardware
from mlnode.schemas import ChatCompletionRequest, ErrorDetail, ModelList, NodeInfo
from mlnode.sprint.params import DEFAULT_RACE_PRESET, RACE_PRESETS
from mlnode.sprint.routes import sprint_router


async def sse(stream: ChunkStream, include_usage: bool) -> AsyncIterator[str]:
    """Server-sent events as OpenAI sends them; a failure mid-stream becomes an ``{"error": …}`` event."""
    exclude = None if include_usage else {"usage"}
    try:
        async for chunk in stream:
            yield f"data: {chunk.model_dump_json(exclude=exclude)}\n\n"
    except APIError as error:
        yield f"data: {error.body.model_dump_json()}\n\n"
    finally:
        await stream.aclose()
    yield "data: [DONE]\n\n"


def api_router(backend: Backend, hardware: Hardware) -> APIRouter:
    router = APIRouter()

    @router.post("/v1/chat/completions", response_model=None)
    async def chat_completions(body: ChatCompletionRequest) -> Response:
        if not body.stream:
            return JSONResponse((await backend.complete(body)).model_dump(mode="json"))
        stream = await backend.stream(body)
        # The background close also frees the request when the client leaves before the first chunk.
        return StreamingResponse(
            sse(stream, body.include_usage), media_type="text/event-stream", background=BackgroundTask(stream.aclose)
        )

    @router.get("/v1/models")
    async def models() -> ModelList:
        return ModelList(data=await backend.models())

    @router.get("/health")
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    @router.get("/v1/node/info")
    async def node_info() -> NodeInfo:
        return NodeInfo(
            models=await backend.models(),
            device=hardware.device,
            threads=hardware.threads,
            memory=nodeinfo.memory(hardware.device),
            load=backend.load(),
            memory_bandwidth_gbps=hardware.memory_bandwidth_gbps,
        )

    return router


def validation_error(exc: RequestValidationError) -> APIError:
    """The first problem FastAPI found, named the way OpenAI names parameters (``messages[0].role``)."""
    first = exc.errors()[0]
    if first["type"] == "json_invalid":
        return invalid_request("We could not parse the JSON body of your request. The body must be valid JSON.")
    location = first["loc"][1:] if first["loc"][:1] == ("body",) else first["loc"]
    param = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in location).lstrip(".") or None
    reason = str(first.get("ctx", {}).get("error") or first["msg"])
    if param is None:
        return invalid_request(f"Invalid request body: {reason}")
    if first["type"] == "missing":
        return invalid_request(f"Missing required parameter: '{param}'.", param)
    return invalid_request(f"Invalid value for '{param}': {reason}", param)


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(APIError)
    async def api_error(_: Request, exc: APIError) -> Response:
        return exc.response()

    @app.exception_handler(RequestValidationError)
    async def request_validation_error(_: Request, exc: RequestValidationError) -> Response:
        return validation_error(exc).response()

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Response:
        message = f"Invalid URL ({request.method} {request.url.path})" if exc.status_code == 404 else exc.detail
        return APIError(
            exc.status_code, ErrorDetail(message=message, type="invalid_request_error"), dict(exc.headers or {})
        ).response()

    @app.exception_handler(Exception)
    async def unexpected_error(_: Request, __: Exception) -> Response:
        """Starlette still re-raises the exception afterwards, so it is logged with its traceback."""
        return server_error("The node failed while processing the request.").response()


def create_app(
    backend: Backend,
    hardware: Hardware,
    routers: Sequence[APIRouter] = (),
    max_body_bytes: int = MIN_BODY_BYTES,
    race_preset: str = DEFAULT_RACE_PRESET,
) -> FastAPI:
    """The node's app; the backend starts and stops with it. ``routers`` add backend-specific routes;
    ``race_preset`` names the Sprint race (``RACE_PRESETS``)."""

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        await backend.start()
        try:
            yield
        finally:
            await backend.aclose()

    app = FastAPI(title="Gonka ML node", lifespan=lifespan)
    app.include_router(api_router(backend, hardware))
    app.include_router(sprint_router(RACE_PRESETS[race_preset], preset=race_preset))
    for router in routers:
        app.include_router(router)
    install_error_handlers(app)
    app.add_middleware(BodyLimit, max_bytes=max_body_bytes)
    return app
