"""The review page's HTML: server-rendered, no script, every value escaped.

A page image is embedded in its page (a ``data:`` URI), so it leaves in the one
response the egress event covers, under that response's ``no-store``; the
boxes of the fields are drawn over it in percent of the page, so they scale
with the image whatever its resolution.
"""

from __future__ import annotations

from html import escape
from typing import Any

from custody.reviews import reject_codes

_STYLE = (
    "body{font-family:sans-serif;margin:2em}.page{position:relative;display:inline-block}"
    ".page img{max-width:900px;width:100%}.box{position:absolute;border:2px solid #c00}"
    ".box.ok{border-color:#080}label{display:block;margin:.4em 0}"
)


def frame(title: str, body: str) -> str:
    return (
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{escape(title)}"
        f"</title><style>{_STYLE}</style></head><body><h1>{escape(title)}</h1>{body}</body></html>"
    )


def sign_in(message: str = "") -> str:
    note = f"<p role='alert'>{escape(message)}</p>" if message else ""
    return frame("Review sign-in", note + (
        "<form method='post' action='/review/sign-in'>"
        "<label for='api_key'>API key</label><input id='api_key' name='api_key' type='password'>"
        "<label for='credential'>Reviewer credential</label>"
        "<textarea id='credential' name='credential' rows='4' cols='60'></textarea>"
        "<p><button type='submit'>Sign in</button></p></form>"
    ))  # fmt: skip


def queue(person: str, rows: list[dict[str, Any]], csrf: str) -> str:
    items = "".join(
        f"<li><a href='/review/{r['sha256']}'>{r['sha256'][:12]}</a> "
        f"{escape(', '.join(r['reasons']))}: {escape(', '.join(r['fields_needing_review']))}"
        f" (since {escape(r['waiting_since'][:19])})</li>"
        for r in rows
    )
    listing = f"<ul>{items}</ul>" if rows else "<p>No documents waiting.</p>"
    return frame(f"Waiting for review (signed in as {person})", listing + _sign_out(csrf))


def document(material: dict[str, Any], csrf: str) -> str:
    sha = material["sha256"]
    pages = "".join(_page(p, material["fields"]) for p in material["pages"])
    inputs = "".join(_field(n, f) for n, f in material["fields"].items())
    codes = "".join(f"<option>{c}</option>" for c in reject_codes())
    form = (
        f"<form method='post' action='/review/{sha}'><input type='hidden' name='csrf' "
        f"value='{csrf}'><h2>Fields</h2>{inputs}"
        "<label for='note'>Note</label><textarea id='note' name='note'></textarea>"
        "<p><button type='submit' name='verdict' value='approve'>Approve</button></p>"
        f"<label for='reject_code'>Reject code</label><select id='reject_code' "
        f"name='reject_code'>{codes}</select>"
        "<button type='submit' name='verdict' value='reject'>Reject</button></form>"
    )
    why = escape(", ".join(material["reasons"]))
    return frame(f"Document {sha[:12]}", f"<p>Waiting for: {why}</p>{pages}{form}")


def decided(sha: str, state: str, by: str) -> str:
    body = f"<p id='outcome'>{escape(state)}, reviewed by {escape(by)}</p>"
    return frame(f"Document {sha[:12]}", body + "<p><a href='/review'>Back to the queue</a></p>")


def refused(code: str, message: str) -> str:
    body = f"<p role='alert'>{escape(code)}: {escape(message)}</p><p><a href='/review'>Queue</a>"
    return frame("Refused", body)


def _page(page: dict[str, Any], fields: dict[str, Any]) -> str:
    if not page.get("image_png"):
        return f"<p>Page {page['page']}: no image.</p>"
    boxes = "".join(
        _box(name, f, page["width"], page["height"])
        for name, f in fields.items()
        if f.get("box") and f.get("page") == page["page"]
    )
    img = f"<img alt='page {page['page']}' src='data:image/png;base64,{page['image_png']}'>"
    return f"<div class='page'>{img}{boxes}</div>"


def _box(name: str, f: dict[str, Any], width: int, height: int) -> str:
    x0, y0, x1, y1 = f["box"]
    kind = "box" if f["needs_review"] else "box ok"
    at = (
        f"left:{100 * x0 / width:.2f}%;top:{100 * y0 / height:.2f}%;"
        f"width:{100 * (x1 - x0) / width:.2f}%;height:{100 * (y1 - y0) / height:.2f}%"
    )
    return f"<div class='{kind}' title='{escape(name)}' style='{at}'></div>"


def _field(name: str, f: dict[str, Any]) -> str:
    mark = " (needs review)" if f["needs_review"] else ""
    shown = "" if f["value"] is None else str(f["value"])
    return (
        f"<label for='field.{escape(name)}'>{escape(name)}{mark}: read "
        f"'{escape(shown)}'</label><input id='field.{escape(name)}' name='field.{escape(name)}'"
        " placeholder='leave empty to keep'>"
    )


def _sign_out(csrf: str) -> str:
    return (
        f"<form method='post' action='/review/sign-out'><input type='hidden' name='csrf' "
        f"value='{csrf}'><button type='submit'>Sign out</button></form>"
    )
