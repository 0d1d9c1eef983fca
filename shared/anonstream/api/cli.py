"""``anonstream serve``: the REST API under uvicorn (see app.py for the routes).

    ANONSTREAM_API_TOKEN=... anonstream serve [--host H] [--port P] [--max-body-bytes N] [--no-documents]
    anonstream serve --insecure-no-auth        (local experiments only: no token needed)

The pii core is loaded before the server listens. With ``/v1/documents`` (the default) the server also
needs the broker and Redis (``ANONSTREAM_BOOTSTRAP``, ``ANONSTREAM_REDIS_URL``); ``--no-documents``
serves only the Presidio-compatible ``/analyze`` and ``/anonymize``.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import sys
from typing import Any

MIN_TOKEN_CHARS = 16


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from ..config import Settings
    from ..pii.engine import PiiConfig, PiiEngine
    from .app import create_app
    from .documents import KafkaDocuments
    from .presidio import Analyzer

    token = os.environ.get("ANONSTREAM_API_TOKEN") or None
    if token is None and not args.insecure_no_auth:
        print("anonstream serve: ANONSTREAM_API_TOKEN is not set; set it (a long random string) or pass "
              "--insecure-no-auth to serve without authentication", file=sys.stderr)
        return 2
    if token is not None and len(token) < MIN_TOKEN_CHARS:
        print(f"anonstream serve: ANONSTREAM_API_TOKEN must have at least {MIN_TOKEN_CHARS} characters",
              file=sys.stderr)
        return 2
    if args.insecure_no_auth:
        token = None
        print("anonstream serve: --insecure-no-auth: every client may call the API", file=sys.stderr)
    settings = Settings()
    config = PiiConfig.load(settings.pii_config) if settings.pii_config else PiiConfig()
    if settings.spacy_model:
        config.spacy_model = settings.spacy_model
    analyzer = Analyzer(PiiEngine.from_config(config))
    backend = None if args.no_documents else KafkaDocuments(settings)

    @contextlib.asynccontextmanager
    async def lifespan(app):
        if backend is not None:
            await backend.start()
        try:
            yield
        finally:
            if backend is not None:
                await backend.stop()

    app = create_app(analyzer, backend, token, args.max_body_bytes or settings.api_max_body_bytes, lifespan)
    uvicorn.run(app, host=args.host or settings.api_host, port=args.port or settings.api_port,
                log_level=(args.log_level or settings.log_level).lower())
    return 0


def add_commands(subparsers: Any) -> None:
    p = subparsers.add_parser("serve", help="REST API: Presidio-compatible /analyze and /anonymize, /v1/documents")
    p.add_argument("--host", help="listen address (default ANONSTREAM_API_HOST, 127.0.0.1)")
    p.add_argument("--port", type=int, help="port (default ANONSTREAM_API_PORT, 8080)")
    p.add_argument("--max-body-bytes", type=int, help="413 above this (default ANONSTREAM_API_MAX_BODY_BYTES, 1 MiB)")
    p.add_argument("--no-documents", action="store_true",
                   help="serve /analyze and /anonymize only (no broker, no Redis)")
    p.add_argument("--insecure-no-auth", action="store_true",
                   help="serve without the bearer token (ANONSTREAM_API_TOKEN unset); local experiments only")
    p.set_defaults(func=cmd_serve)
