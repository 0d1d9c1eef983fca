"""FastAPI wiring of the REST API: request/response models (they make ``/openapi.json``), bearer-token
authentication, the request-size limit and error shapes. The work is done by ``presidio.py`` and
``documents.py``.

* ``POST /analyze``, ``POST /anonymize`` — Presidio's REST shapes (a Presidio client can point here).
* ``POST /v1/documents`` (202) and ``GET /v1/documents/{doc_id}`` (404 until sanitized) — only when a
  documents backend is given (``anonstream serve`` without ``--no-documents``).
* ``GET /openapi.json`` — public; every other route needs ``Authorization: Bearer <ANONSTREAM_API_TOKEN>``
  (compared in constant time) unless the app is built without a token (``--insecure-no-auth``).

Errors are ``{"error": message}`` (Presidio's shape) with 401, 404, 413, 422 or 503; validation messages
name fields and rules, never the submitted values, and no request body is ever logged.
"""
from __future__ import annotations

import hmac
from typing import Any, Literal

from fastapi import Depends, FastAPI, Path, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException

from .. import contracts
from .documents import BrokerUnavailable, DocumentsBackend, prepare_document
from .presidio import HASH_TYPES, LANGUAGES, Analyzer, InvalidRequest, anonymize
from ..stores.base import StoreUnavailable

# document.v1.json's doc_id rule ``^[^\s|]+$`` with the whitespace spelled out: ``\s`` means different sets
# in Python and in ECMAScript (OpenAPI clients), this is their union, as literal characters both engines read.
_SPACE = "\t\n\v\f\r \x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
DOC_ID_PATTERN = f"^[^{_SPACE}|]+$"


class ErrorBody(BaseModel):
    error: str


class AnalyzeRequest(BaseModel):
    """Presidio analyzer's request; its other fields (correlation_id, context, ...) are accepted and ignored."""
    model_config = ConfigDict(extra="ignore")
    text: str
    language: Literal[LANGUAGES]  # type: ignore[valid-type]
    entities: list[str] | None = None
    score_threshold: float | None = Field(default=None, ge=0.0, le=1.0)


class RecognitionMetadata(BaseModel):
    recognizer_name: str
    identifier_type: Literal["DIRECT", "QUASI", "NO_MASK"]


class AnalyzeResult(BaseModel):
    entity_type: str
    start: int
    end: int
    score: float
    analysis_explanation: None = None
    recognition_metadata: RecognitionMetadata


class AnalyzerResultIn(BaseModel):
    model_config = ConfigDict(extra="ignore")
    entity_type: str
    start: int = Field(ge=0)
    end: int = Field(ge=0)
    score: float


class OperatorConfig(BaseModel):
    """One of Presidio's operators with its parameters."""
    model_config = ConfigDict(extra="ignore")
    type: Literal["replace", "redact", "mask", "hash", "keep"]
    new_value: str | None = None
    masking_char: str | None = Field(default=None, min_length=1, max_length=1)
    chars_to_mask: int | None = Field(default=None, ge=0)
    from_end: bool = False
    hash_type: Literal[HASH_TYPES] = "sha256"  # type: ignore[valid-type]
    salt: str | None = None


class AnonymizeRequest(BaseModel):
    model_config = ConfigDict(extra="ignore")
    text: str = Field(min_length=1)
    analyzer_results: list[AnalyzerResultIn] = []
    anonymizers: dict[str, OperatorConfig] = {}


class AnonymizeItem(BaseModel):
    start: int
    end: int
    entity_type: str
    text: str
    operator: str


class AnonymizeResponse(BaseModel):
    text: str
    items: list[AnonymizeItem]


class DocumentIn(BaseModel):
    """A document for the input topic (schemas/document.v1.json); ``doc_id`` is generated when absent."""
    model_config = ConfigDict(extra="forbid")
    doc_id: str | None = Field(default=None, min_length=1, max_length=256, pattern=DOC_ID_PATTERN)
    text: str = Field(min_length=1, max_length=2_000_000)
    metadata: dict[str, Any] = {}


class Accepted(BaseModel):
    doc_id: str
    status: Literal["accepted"] = "accepted"


class DocumentChange(BaseModel):
    """One changed span of a sanitized document's text (schemas/sanitized-document.v1.json, ``changes``)."""
    start: int
    end: int
    entity_type: str | None
    kind: str | None
    identifier_type: Literal["DIRECT", "QUASI", "NO_MASK"] | None
    operator: Literal["pseudonym", "swap", "generalize", "suppress"]
    release_version: str | None


class SanitizedDocument(BaseModel):
    """schemas/sanitized-document.v1.json (the sink's output); ``changes`` on documents of sink@2 and later."""
    model_config = ConfigDict(extra="allow")
    doc_id: str
    text: str
    metadata: dict[str, Any]
    changes: list[DocumentChange] | None = None


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=headers)


class BodyLimit:
    """ASGI middleware: a request body over ``max_bytes`` gets 413 before any route sees it (by its
    Content-Length, or while reading a chunked body; at most ``max_bytes`` are buffered)."""

    def __init__(self, app, max_bytes: int):
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        response = _error(413, f"request body larger than {self.max_bytes} bytes")
        length = dict(scope["headers"]).get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.max_bytes:
            return await response(scope, receive, send)
        body, more = b"", True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > self.max_bytes:
                return await response(scope, receive, send)
        replayed = False

        async def replay():
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        return await self.app(scope, replay, send)


COMMON = {401: {"model": ErrorBody, "description": "missing or wrong bearer token"},
          413: {"model": ErrorBody, "description": "request body too large"},
          422: {"model": ErrorBody, "description": "invalid request"}}


def create_app(analyzer: Analyzer, documents: DocumentsBackend | None = None, token: str | None = None,
               max_body_bytes: int = 1 << 20, lifespan=None) -> FastAPI:
    """``token=None`` turns authentication off (``--insecure-no-auth``); ``lifespan`` starts and stops the
    documents backend in the server."""
    bearer = HTTPBearer(auto_error=False)
    expected = token.encode() if token is not None else None

    def authenticated(credentials: HTTPAuthorizationCredentials | None = Depends(bearer)) -> None:
        if expected is None:
            return
        given = credentials.credentials.encode() if credentials is not None else b""
        if credentials is None or not hmac.compare_digest(given, expected):
            raise HTTPException(401, "missing or wrong bearer token", headers={"WWW-Authenticate": "Bearer"})

    app = FastAPI(title="anonstream", version="1", lifespan=lifespan,
                  description="Presidio-compatible analyze/anonymize on anonstream's pii core, and the "
                              "pipeline's document intake and sanitized results.",
                  docs_url=None, redoc_url=None,
                  dependencies=[Depends(authenticated)] if expected is not None else [])
    app.add_middleware(BodyLimit, max_bytes=max_body_bytes)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError):
        where = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['type']}" for e in exc.errors()[:5])
        return _error(422, f"invalid request: {where}")

    @app.exception_handler(HTTPException)
    async def _http(request: Request, exc: HTTPException):
        return _error(exc.status_code, str(exc.detail), getattr(exc, "headers", None))

    @app.exception_handler(InvalidRequest)
    async def _unservable(request: Request, exc: InvalidRequest):
        return _error(422, str(exc))

    @app.post("/analyze", response_model=list[AnalyzeResult], responses=COMMON, tags=["presidio"])
    def analyze(request: AnalyzeRequest) -> list[dict[str, Any]]:
        """Detected PII spans with Presidio entity names (offsets: code points, end exclusive)."""
        return analyzer.analyze(request.text, request.language, request.entities, request.score_threshold)

    @app.post("/anonymize", response_model=AnonymizeResponse, responses=COMMON, tags=["presidio"])
    def anonymize_(request: AnonymizeRequest) -> dict[str, Any]:
        """Apply Presidio operators to the given spans; item offsets are into the new text."""
        return anonymize(request.text, [r.model_dump() for r in request.analyzer_results],
                         {k: v.model_dump(exclude_none=True) for k, v in request.anonymizers.items()})

    if documents is not None:
        unavailable = {503: {"model": ErrorBody, "description": "broker or Redis unavailable"}}

        @app.post("/v1/documents", status_code=202, response_model=Accepted, tags=["documents"],
                  responses={**COMMON, **unavailable})
        async def submit(document: DocumentIn) -> dict[str, str]:
            """Produce the document to the input topic; 202 once the broker acknowledged it."""
            try:
                record = prepare_document(document.model_dump(exclude_none=True))
            except contracts.RecordInvalid as exc:
                raise InvalidRequest(str(exc)) from exc
            try:
                await documents.submit(record)
            except BrokerUnavailable as exc:
                raise HTTPException(503, f"broker unavailable ({exc})") from exc
            return {"doc_id": record["doc_id"], "status": "accepted"}

        @app.get("/v1/documents/{doc_id}", response_model=SanitizedDocument, response_model_exclude_unset=True,
                 tags=["documents"],
                 responses={401: COMMON[401], 404: {"model": ErrorBody, "description": "not sanitized (yet)"},
                            422: COMMON[422], **unavailable})
        async def result(doc_id: str = Path(min_length=1, max_length=256, pattern=DOC_ID_PATTERN)) -> dict[str, Any]:
            """The sanitized document (schemas/sanitized-document.v1.json), once the sink has written it, with
            ``changes``: every changed span of its text (offsets into ``text``, never the replaced value)."""
            try:
                found = await documents.result(doc_id)
            except StoreUnavailable as exc:
                raise HTTPException(503, "result store unavailable") from exc
            if found is None:
                raise HTTPException(404, "no sanitized document with this id (yet)")
            return found

    return app

