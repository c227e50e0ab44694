"""The study web app (FastAPI, server-rendered Jinja2 pages).

Participant pages live under ``/p/{token}`` (the invite link): consent -> practice (if any) ->
assignments one by one -> done.  A participant reaches only their own assignments (another
participant's assignment id answers 404).  Every form carries the participant's CSRF token, and a
POST without it is rejected (403).  Answers are validated against the study (400 with the form
shown again otherwise) and upserted, then the browser is redirected (POST/redirect/GET), so a
refresh or a double submit never duplicates an answer.

Researcher endpoints under ``/admin`` need ``Authorization: Bearer <admin token>`` (401 without).
Errors are shown as short pages; tracebacks go to the server log only.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import math
import re
from pathlib import Path
from typing import Annotated, Any

from ..extras import ensure, missing
from .config import Study
from .db import StudyDB
from .export import spreadsheet_safe
from .pairing import AdaptivePairer

try:
    from fastapi import FastAPI, Request
    from fastapi import Path as PathParam
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse
    from fastapi.templating import Jinja2Templates
    from starlette.concurrency import run_in_threadpool
    from starlette.exceptions import HTTPException
except ImportError as exc:  # a core install: the study extra is not there
    raise missing("study", "the study web app (edueval study)", exc.name) from exc
try:  # the participants' forms (python-multipart's module, old and new names)
    ensure("python_multipart", "study", "the study web app (edueval study)")
except ImportError:
    ensure("multipart", "study", "the study web app (edueval study)")

__all__ = ["create_app"]

log = logging.getLogger("edueval.study")
_TEMPLATES = Jinja2Templates(directory=str(Path(__file__).parent / "templates"))
# the templates ship with the package: compiled once, never checked for changes on each page
_TEMPLATES.env.auto_reload = False
_MAX_TEXT = 5000
#: assignment ids are database integers: anything else is a 400, not a database error
AssignmentId = Annotated[int, PathParam(ge=1, le=2**31 - 1)]


class _Invalid(Exception):
    pass


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
#: request bodies larger than this are refused with 413 before they are read (a form holds at
#: most a 5,000-character answer: under 60 KiB even with every character percent-encoded)
MAX_BODY_BYTES = 256 * 1024


def clean_text(text: str) -> str:
    """A participant's free text as stored: line breaks as ``\\n`` (browsers submit ``\\r\\n``
    but count one character per break against ``maxlength``, so the server counts the same
    way), and no NUL or other control characters (PostgreSQL refuses NUL in text)."""
    return _CONTROL.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


def _quiet_path(path: str) -> str:
    """A request path with the participant's token hidden, for logs."""
    return re.sub(r"/p/[^/]+", "/p/<token>", path)


def _timing(form: Any) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for name in ("first_click", "last_click", "submit"):
        raw = str(form.get(name, "") or "").strip()
        try:
            v = float(raw) if raw else None
        except ValueError:
            v = None
        out[f"{name}_s"] = v if v is not None and math.isfinite(v) and 0 <= v < 1e7 else None
    return out


def _answers(study: Study, item: dict[str, Any], form: Any) -> dict[str, str]:
    """Validated answers ``{question id: value}`` from a submitted form (raises _Invalid)."""
    if study.kind == "comparative":
        out = {}
        for n, q in enumerate(study.questions):
            v = form.get(f"q{n}")
            if v not in ("first", "second", "tie"):
                raise _Invalid("Please answer every question.")
            out[q["id"]] = v
        return out
    if study.kind == "open":
        v = clean_text(str(form.get("answer", "") or "")).strip()
        if not v or len(v) > _MAX_TEXT:
            raise _Invalid(f"Please write an answer (at most {_MAX_TEXT} characters).")
        return {"answer": v}
    v = str(form.get("choice", "") or "")
    if v not in {str(o["position"]) for o in item["options"]}:
        raise _Invalid("Please choose one option.")
    return {"choice": v}


def _inline_hashes(tag: str) -> list[str]:
    """CSP hashes of the inline ``<script>``/``<style>`` blocks of the templates (static text)."""
    out = []
    for template in sorted((Path(__file__).parent / "templates").glob("*.html")):
        for body in re.findall(rf"<{tag}>(.*?)</{tag}>", template.read_text("utf-8"), re.S):
            digest = base64.b64encode(hashlib.sha256(body.encode()).digest()).decode()
            out.append(f"'sha256-{digest}'")
    return out


def _csp() -> bytes:
    scripts = " ".join(_inline_hashes("script")) or "'none'"
    styles = " ".join(_inline_hashes("style")) or "'none'"
    return (f"default-src 'none'; script-src {scripts}; style-src {styles}; img-src 'self'; "
            "form-action 'self'; frame-ancestors 'none'; base-uri 'none'").encode()  # fmt: skip


_HEADERS = [(b"x-frame-options", b"DENY"), (b"x-content-type-options", b"nosniff"),
            (b"referrer-policy", b"no-referrer"), (b"cache-control", b"no-store"),
            (b"content-security-policy", _csp())]  # fmt: skip
_HSTS = (b"strict-transport-security", b"max-age=31536000")


class _SecurityHeaders:
    """Adds the security headers to every HTTP response (plain ASGI: cheaper under load than
    ``@app.middleware("http")``, which runs each request through an extra task and stream)."""

    def __init__(self, app: Any, tls: bool = False) -> None:
        self.app = app
        self.headers = _HEADERS + ([_HSTS] if tls else [])

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def send_with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                names = {k for k, _ in self.headers}
                kept = [(k, v) for k, v in message.get("headers", []) if k.lower() not in names]
                message = {**message, "headers": kept + self.headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)


class _BodyLimit:
    """Refuses a request body over ``MAX_BODY_BYTES`` with 413: at once when Content-Length
    says so, else as soon as the streamed body passes the limit (so no link can make the
    server hold large bodies in memory)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        length = dict(scope.get("headers", [])).get(b"content-length", b"0")
        if not length.isdigit() or int(length) > MAX_BODY_BYTES:
            return await _too_large(send)
        seen = 0

        async def limited() -> Any:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > MAX_BODY_BYTES:
                raise _TooLarge
            return message

        try:
            await self.app(scope, limited, send)
        except _TooLarge:
            await _too_large(send)


class _TooLarge(Exception):
    pass


async def _too_large(send: Any) -> None:
    await send({"type": "http.response.start", "status": 413,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"), *_HEADERS]})  # fmt: skip
    await send({"type": "http.response.body", "body": b"The request is too large."})


def create_app(study: Study, db_url: str, admin_token: str, *, tls: bool = False) -> FastAPI:
    """The app for one study.  ``admin_token``: see :func:`check_admin_token`; ``tls``: served
    over HTTPS (adds Strict-Transport-Security)."""
    problem = admin_token_problem(admin_token)
    if problem:
        raise ValueError(problem)
    db = StudyDB(study, db_url)
    app = FastAPI(title=study.title, docs_url=None, redoc_url=None, openapi_url=None)
    app.state.db = db
    site = _Site(study, db)
    app.add_middleware(_BodyLimit)
    app.add_middleware(_SecurityHeaders, tls=tls)
    _add_error_handlers(app, site)
    _add_entry_routes(app, site)
    _add_assignment_routes(app, site)
    _add_admin_routes(app, site, admin_token)
    return app


class _Site:
    """What the participant pages share: the study, its database, page rendering, and the
    look-ups every route makes (participant by token, the checked form, where to go next)."""

    def __init__(self, study: Study, db: StudyDB) -> None:
        self.study = study
        self.db = db
        self._pairers: dict[str, AdaptivePairer] = {}
        if study.pairing.adaptive:  # made now: it loads the pairwise package (a second or two)
            self._pairers[study.pairing.policy] = AdaptivePairer(study, db)

    def pairer(self, a: dict[str, Any]) -> AdaptivePairer | None:
        """The pairer of slot ``a`` if it still needs a pair (an adaptive slot not yet opened),
        under the policy it was invited with (the study's, unless ``study.yaml`` changed)."""
        if a["first"] is not None or self.study.kind != "comparative":
            return None
        policy = a["pairing"] if a["pairing"] not in (None, "random") else self.study.pairing.policy
        if policy not in self._pairers:
            self._pairers[policy] = AdaptivePairer(self.study, self.db, policy)
        return self._pairers[policy]

    def paired(self, a: dict[str, Any]) -> dict[str, Any]:
        """Slot ``a`` with its pair: an adaptive slot gets it now, when first opened (unless
        :meth:`save_then_next` chose it with the previous answer)."""
        pairer = self.pairer(a)
        return a if pairer is None else pairer.choose(a)

    def save_then_next(self, p: dict[str, Any], a: dict[str, Any], answers: dict[str, str],
                       timing: dict[str, float | None]) -> str:  # fmt: skip
        """Store the answers of slot ``a`` (all its questions) and return where the participant
        goes next: the first slot left unanswered, or the closing page.

        If that slot is adaptive and has no pair yet, its pair is chosen in the transaction that
        stores the answers: one write instead of two (a SQLite database's writers take turns,
        so with several server processes the second write was most of the cost of adaptive
        pairing).  If the choice fails, the answers are stored alone and the pair is chosen
        when the slot is opened, as before."""
        base = f"/p/{p['token']}"
        slots = self.db.assignments_of(p["id"])
        later = [x for x in slots if not x["answered"] and x["id"] != a["id"]]
        pairer = self.pairer(later[0]) if later else None
        if pairer is None:
            self.db.save(a["id"], answers, timing)
        else:
            try:
                pairer.choose(later[0],
                              before=lambda c: self.db.save_in(c, a["id"], answers, timing))  # fmt: skip
            except Exception as exc:  # the answers alone; the pair when the slot is opened
                log.warning("pair not chosen with the answer (%s): chosen when opened",
                            type(exc).__name__)  # fmt: skip
                self.db.save(a["id"], answers, timing)
        first = not any(x["answered"] for x in slots if x["id"] == a["id"])
        if first and a.get("pair_seq") is not None:  # a judgement of an adaptive stream
            for each in self._pairers.values():
                each.answered(a["item_id"], a["panel"])
        return f"{base}/a/{later[0]['id']}" if later else f"{base}/done"

    def page(self, request: Request, name: str, status: int = 200, **ctx: Any) -> HTMLResponse:
        resp = _TEMPLATES.TemplateResponse(request, name, {"study": self.study, **ctx},
                                           status_code=status)  # fmt: skip
        return resp

    def error(self, request: Request, status: int, message: str) -> HTMLResponse:
        return self.page(request, "error.html", status, message=message)

    def who(self, token: str) -> dict[str, Any]:
        p = self.db.participant(token) if len(token) <= 64 else None
        if p is None:
            raise HTTPException(404)
        return p

    async def form_of(self, request: Request, p: dict[str, Any]) -> Any:
        try:
            form = await request.form(max_files=0, max_fields=100)
        except _TooLarge:
            raise  # answered 413 by _BodyLimit
        except Exception:
            raise HTTPException(400, "The form could not be read.") from None
        sent = str(form.get("csrf", "") or "")
        if not sent or not hmac.compare_digest(sent.encode(), p["csrf"].encode()):
            raise HTTPException(403)
        return form

    def next_url(self, p: dict[str, Any]) -> str:
        base = f"/p/{p['token']}"
        if p["consented_at"] is None:
            return base
        if self.study.practice is not None and p["practice_done_at"] is None:
            return f"{base}/practice"
        for a in self.db.assignments_of(p["id"]):
            if not a["answered"]:
                return f"{base}/a/{a['id']}"
        return f"{base}/done"

    def view(self, item: dict[str, Any], a: dict[str, Any] | None) -> dict[str, Any]:
        if self.study.kind == "comparative":
            first, second = (a["first"], a["second"]) if a else sorted(item["replies"])[:2]
            return {"context": item["context"], "reply_a": item["replies"][first],
                    "reply_b": item["replies"][second]}  # fmt: skip
        return {}

    def item_page(self, request, p, item, a, status=200, message=None, answers=None):
        n = self.db.assignments_of(p["id"])
        done = sum(x["answered"] for x in n)
        return self.page(request, "item.html", status, p=p, item=item, a=a, message=message,
                         answers=answers or (a or {}).get("answers", {}), done=done,
                         total=len(n),
                         action=f"/p/{p['token']}/" + (f"a/{a['id']}" if a else "practice"),
                         **self.view(item, a))  # fmt: skip

    def load(self, token: str, aid: int) -> tuple[dict, dict, dict]:
        p = self.who(token)
        a = self.db.assignment(p["id"], aid)
        if a is None:
            raise HTTPException(404)
        return p, a, self.study.item(a["item_id"], p["label"])


def _add_error_handlers(app: FastAPI, site: _Site) -> None:
    """Errors as short pages (JSON under /admin); tracebacks to the server log only."""

    @app.exception_handler(HTTPException)
    async def _http(request: Request, exc: HTTPException):
        if request.url.path.startswith("/admin"):
            headers = {"WWW-Authenticate": "Bearer"} if exc.status_code == 401 else None
            return JSONResponse({"error": exc.detail}, exc.status_code, headers=headers)
        msg = {404: "This page does not exist.", 403: "This form has expired or was not sent "
               "from the study page. Please go back and reload the page."}.get(
            exc.status_code, str(exc.detail))  # fmt: skip
        return site.error(request, exc.status_code, msg)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError):
        return site.error(request, 400, "The request was not valid.")

    @app.exception_handler(Exception)
    async def _crash(request: Request, exc: Exception):
        log.error("error on %s: %s", _quiet_path(request.url.path), type(exc).__name__)
        return PlainTextResponse("Something went wrong on the server. Please try again.", 500)


def _add_entry_routes(app: FastAPI, site: _Site) -> None:
    """The home page, the participant's link, consent and the practice item."""
    study, db = site.study, site.db

    @app.get("/", response_class=HTMLResponse)
    def home(request: Request):
        return site.error(request, 200, "Please open the personal link you were sent.")

    @app.get("/p/{token}", response_class=HTMLResponse)
    def participant_home(request: Request, token: str):
        p = site.who(token)
        if p["consented_at"] is None:
            return site.page(request, "consent.html", p=p)
        return RedirectResponse(site.next_url(p), 303)

    @app.post("/p/{token}/consent")
    async def consent(request: Request, token: str):
        p = await run_in_threadpool(site.who, token)
        form = await site.form_of(request, p)
        if form.get("agree") != "yes":
            return site.page(
                request, "consent.html", 400, p=p, message="Please tick the box to take part."
            )
        await run_in_threadpool(db.mark, p["id"], "consented_at")
        return RedirectResponse(
            await run_in_threadpool(lambda: site.next_url(site.who(token))), 303
        )

    @app.get("/p/{token}/practice", response_class=HTMLResponse)
    def practice(request: Request, token: str):
        p = site.who(token)
        if study.practice is None or p["consented_at"] is None:
            return RedirectResponse(site.next_url(p), 303)
        return site.item_page(request, p, study.practice, None)

    @app.post("/p/{token}/practice")
    async def practice_submit(request: Request, token: str):
        p = await run_in_threadpool(site.who, token)
        form = await site.form_of(request, p)
        if study.practice is None:
            raise HTTPException(404)
        if p["consented_at"] is None:
            return RedirectResponse(f"/p/{token}", 303)  # consent comes first
        try:
            _answers(study, study.practice, form)
        except _Invalid as exc:
            return await run_in_threadpool(
                site.item_page, request, p, study.practice, None, 400, str(exc)
            )
        await run_in_threadpool(db.mark, p["id"], "practice_done_at")
        return RedirectResponse(
            await run_in_threadpool(lambda: site.next_url(site.who(token))), 303
        )


def _add_assignment_routes(app: FastAPI, site: _Site) -> None:
    """The assignments one by one, and the closing page."""
    study, db = site.study, site.db

    @app.get("/p/{token}/a/{aid}", response_class=HTMLResponse)
    def assignment(request: Request, token: str, aid: AssignmentId):
        p, a, item = site.load(token, aid)
        if p["consented_at"] is None:
            return RedirectResponse(f"/p/{token}", 303)
        if study.practice is not None and p["practice_done_at"] is None:
            return RedirectResponse(f"/p/{token}/practice", 303)
        a = site.paired(a)  # adaptive: the pair chosen now
        return site.item_page(request, p, item, a)

    @app.post("/p/{token}/a/{aid}")
    async def submit(request: Request, token: str, aid: AssignmentId):
        p, a, item = await run_in_threadpool(site.load, token, aid)
        form = await site.form_of(request, p)
        if p["consented_at"] is None:
            raise HTTPException(403)
        if study.practice is not None and p["practice_done_at"] is None:
            return RedirectResponse(f"/p/{token}/practice", 303)  # the practice comes first
        if study.kind == "comparative" and a["first"] is None:  # no pair shown yet: show one
            return RedirectResponse(f"/p/{token}/a/{aid}", 303)
        try:
            answers = _answers(study, item, form)
        except _Invalid as exc:
            return await run_in_threadpool(site.item_page, request, p, item, a, 400, str(exc),
                                           dict(form))  # fmt: skip

        # one hop to the thread pool, not two
        return RedirectResponse(
            await run_in_threadpool(site.save_then_next, p, a, answers, _timing(form)), 303
        )

    @app.get("/p/{token}/done", response_class=HTMLResponse)
    def done(request: Request, token: str):
        p = site.who(token)
        items = db.assignments_of(p["id"])
        return site.page(request, "done.html", p=p, items=items,
                         complete=all(x["answered"] for x in items))  # fmt: skip


def _add_admin_routes(app: FastAPI, site: _Site, admin_token: str) -> None:
    """The researcher endpoints, behind the admin token."""
    study, db = site.study, site.db

    def admin(request: Request) -> None:
        auth = request.headers.get("authorization", "")
        sent = auth[7:] if auth.lower().startswith("bearer ") else ""
        if not sent or not hmac.compare_digest(sent.encode(), admin_token.encode()):
            raise HTTPException(401, "admin token required")

    @app.get("/admin/status")
    def admin_status(request: Request):
        admin(request)
        return {"study": study.title, "kind": study.kind, **db.status()}

    @app.get("/admin/export.csv")
    def admin_export(request: Request):
        admin(request)
        table = spreadsheet_safe(db.export())  # a download meant for a spreadsheet
        return PlainTextResponse(table.to_csv(index=False, lineterminator="\n"),
                                 media_type="text/csv")  # fmt: skip


def admin_token_problem(token: str) -> str | None:
    """Why ``token`` is too weak to guard the researcher endpoints, or None.

    The rule: at least 16 characters and at least 64 bits by the Shannon entropy of its own
    characters (length x entropy per character), which refuses ``aaaaaaaaaaaaaaaa`` or
    ``abababababababab``; a ``secrets.token_urlsafe(24)`` token has about 150.  It is one word
    of printable ASCII: it travels in an ``Authorization`` header, where a line break, a space
    or a control character (a token file of two lines, say) could never be sent."""
    if not token.isascii() or not token.isprintable() or any(c.isspace() for c in token):
        return ("the admin token must be one word of printable ASCII characters (no spaces, "
                "line breaks or control characters)")  # fmt: skip
    if len(token) < 16:
        return "the admin token must have at least 16 characters"
    counts = [token.count(c) for c in set(token)]
    bits = -sum(n * math.log2(n / len(token)) for n in counts)
    if bits < 64:
        return (f"the admin token is too easy to guess ({bits:.0f} bits; at least 64 needed): "
                "use a random one, e.g. python -c 'import secrets; print(secrets.token_urlsafe(24))'")  # fmt: skip
    return None


def app_from_env() -> FastAPI:
    """The app of ``edueval study serve`` for a uvicorn factory (``--workers N``): the study file,
    database URL and admin token come from ``EDUEVAL_STUDY_FILE``, ``EDUEVAL_STUDY_DB`` and
    ``EDUEVAL_STUDY_ADMIN_TOKEN``.  Every worker process shares the same database, and CSRF tokens
    live in it, so any worker can answer any request."""
    import os

    from . import load_study

    _exit_with_parent()
    return create_app(load_study(os.environ["EDUEVAL_STUDY_FILE"]), os.environ["EDUEVAL_STUDY_DB"],
                      os.environ["EDUEVAL_STUDY_ADMIN_TOKEN"],
                      tls=os.environ.get("EDUEVAL_STUDY_TLS") == "1")  # fmt: skip


def _exit_with_parent() -> None:
    """In a ``--workers`` process: stop serving when the master process is gone (killed with
    SIGKILL it cannot stop its workers, which would keep the port and serve on as orphans)."""
    import os
    import signal
    import threading
    import time

    # the master's pid as the master wrote it: a worker that starts after the master died has
    # already been re-parented, so its own getppid() at start-up would prove nothing
    parent = int(os.environ.get("EDUEVAL_STUDY_MASTER_PID") or os.getppid())

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)
        os._exit(0)

    threading.Thread(target=watch, name="edueval-parent-watch", daemon=True).start()
