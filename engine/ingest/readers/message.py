"""E-mail messages (``.eml``, and each message of a mailbox, ``engine.ingest.mail``), parsed by the standard
library's ``email`` package with its modern policy, which decodes RFC 2047 headers and records damage as defects
rather than raising (docs/decisions/0041-mail-messages.md).

A message is titled by its subject; its sender, recipients, date and subject open its text, so that a sender's name
finds their messages, and its byline (sender and date) is what a result's card shows under the title. The body is
its text/plain part, else its HTML part through the HTML reader's extraction. In a reply, the lines it quotes
(``> ...``) and the "On ... wrote:" line above them are left out: the message they quote is a document of its own.
Attachments are documents of their own too (``engine.ingest.mail`` lists them); this reader reads the body only.
"""

from __future__ import annotations

import logging
import mimetypes
import re
from datetime import datetime
from email import errors, policy
from email.message import EmailMessage, Message
from email.parser import BytesParser
from email.utils import getaddresses, parsedate_to_datetime
from pathlib import Path, PurePosixPath

from engine.errors import ReadError
from engine.ingest.readers.base import Block, Document, Limits, reader_for_extension, register
from engine.ingest.readers.guard import parser_errors, short_cause
from engine.ingest.readers.html import markup_texts
from engine.ingest.readers.text import decode, paragraphs

log = logging.getLogger(__name__)

# The headers that open a message's text, in the order a mail client shows them.
SHOWN_HEADERS = ("From", "To", "Cc", "Date", "Subject")
# Headers a message has: a file with none of them is no message.
_MESSAGE_HEADERS = frozenset(h.lower() for h in (*SHOWN_HEADERS, "Message-ID", "Received", "Return-Path",
                                                "MIME-Version", "Content-Type"))
# The title of a message without a subject, as mail clients show it (a mailbox's message has no file name to use).
NO_SUBJECT = "(no subject)"
_QUOTED = re.compile(r"[ \t]*>")
# "On Tue, 3 Mar 2024 at 10:00, Alice Smith <alice@example.com> wrote:", often wrapped over two lines.
_WROTE = re.compile(r".*\bwrote:[ \t]*$", re.IGNORECASE)
_ON = re.compile(r"[ \t]*On\b", re.IGNORECASE)
_UNDECODABLE = (errors.CharsetError, errors.UndecodableBytesDefect)
# A name that cannot be a file's in a temporary folder (a separator, a control character).
_UNSAFE_NAME = re.compile(r"[/\\\x00-\x1f]")


def parse(data: bytes) -> EmailMessage:
    """The message of ``data``; raises ReadError where it has no header a message has (random bytes, a text file)."""
    msg = BytesParser(policy=policy.default).parsebytes(data)
    assert isinstance(msg, EmailMessage)  # the default policy's message factory
    if not any(name.lower() in _MESSAGE_HEADERS for name in msg.keys()):
        raise ReadError("corrupt e-mail message: no message header found")
    return msg


def header(msg: Message, name: str) -> tuple[str, bool]:
    """The header ``name`` decoded ("" when absent), and whether all of it could be: an unknown charset or raw 8-bit
    bytes leave U+FFFD where they were, and a header the parser cannot take is given as written."""
    try:
        value = msg.get(name)
        if value is None:
            return "", True
        text = " ".join(str(value).split())
        damaged = any(isinstance(d, _UNDECODABLE) for d in getattr(value, "defects", ()))
        return text, not damaged and "\ufffd" not in text
    except Exception:  # the header parser fails in many ways on hostile values; the raw text is still worth keeping
        log.debug("undecodable %s header", name, exc_info=True)
        raw = next((v for k, v in msg.raw_items() if k.lower() == name.lower()), "")
        return " ".join(str(raw).split()), False


def date_of(msg: Message) -> float | None:
    """The message's Date as seconds since the epoch, or None where it has none that can be read."""
    value, ok = header(msg, "Date")
    if not value or not ok:
        return None
    try:
        when = parsedate_to_datetime(value)
        return when.timestamp()  # a date without a zone is taken as local time, as a mail client shows it
    except (TypeError, ValueError, OverflowError, IndexError):
        return None


def byline(msg: Message) -> str:
    """Who sent the message and when, as a card shows it: "Alice Smith · 2024-03-03 10:00"."""
    sender, _ = header(msg, "From")
    try:
        names = [name or address for name, address in getaddresses([sender])]
    except Exception:  # a hostile address list: shown as written
        names = []
    who = ", ".join(n for n in names if n) or sender
    when = date_of(msg)
    stamp = datetime.fromtimestamp(when).strftime("%Y-%m-%d %H:%M") if when is not None else ""
    return " · ".join(part for part in (who, stamp) if part)


def attachments(msg: EmailMessage) -> list[tuple[str, Message]]:
    """The message's attachments that some reader reads, each with a name unique in the message that can be a file's
    (a PDF, a document, a forwarded message as ``.eml``); images, signatures and formats no reader reads are left out."""
    out: list[tuple[str, Message]] = []
    taken: set[str] = set()
    try:
        parts = list(msg.iter_attachments())
    except Exception:  # a damaged MIME structure: the body is read, the attachments not
        log.debug("attachments not listed", exc_info=True)
        return []
    for number, part in enumerate(parts, 1):
        name = _name(part, number)
        reader = reader_for_extension(Path(name)) if name is not None else None
        # images are left out though Tesseract reads them: logos and signatures, on every message (decision 0043)
        if name is None or reader is None or reader.name == "image":
            continue
        if name in taken:
            name = f"{number}-{name}"
        taken.add(name)
        out.append((name, part))
    return out


def _name(part: Message, number: int) -> str | None:
    """An attachment's file name, made safe to be a path's last part, with an extension for its type if it has none."""
    try:
        given = part.get_filename() or ""
        kind = part.get_content_type()
    except Exception:
        return None
    name = PurePosixPath(_UNSAFE_NAME.sub("_", given)).name.strip().lstrip(".")
    if not PurePosixPath(name).suffix:
        suffix = ".eml" if kind == "message/rfc822" else mimetypes.guess_extension(kind) or ""
        name = (name or f"attachment-{number}") + suffix
    return name


def payload(part: Message) -> bytes:
    """An attachment's bytes, its transfer encoding undone (a forwarded message's as it would be saved)."""
    if part.get_content_type() == "message/rfc822":
        inner = part.get_payload(0) if part.is_multipart() else part.get_payload()
        return inner.as_bytes() if isinstance(inner, Message) else str(inner).encode()
    data = part.get_payload(decode=True)
    return data if isinstance(data, bytes) else b""


def _body(msg: EmailMessage, notes: list[str]) -> list[Block]:
    """The paragraphs of the message's body: text/plain preferred, else its HTML's text."""
    try:
        part = msg.get_body(preferencelist=("plain", "html"))
    except Exception:
        part = None
    if part is None:
        return []
    data = part.get_payload(decode=True)
    if not isinstance(data, bytes) or not data:
        return []
    charset = part.get_content_charset()
    try:
        text = data.decode(charset or "utf-8")
    except (LookupError, UnicodeDecodeError):
        if charset:
            notes.append(f"body's charset {charset[:40]!r} could not be used: its encoding was guessed")
        text = decode(data)  # the text reader's guess: UTF-8, Windows-1252, then charset_normalizer
    if part.get_content_type() == "text/html":
        return markup_texts(text, whole=True)[1]  # all of a message is its own, even a line of one link
    return [Block(p) for p in paragraphs(_unquoted(text) if _is_reply(msg) else text)]


def _is_reply(msg: Message) -> bool:
    return any(header(msg, name)[0] for name in ("In-Reply-To", "References"))


def _unquoted(text: str) -> str:
    """A reply's text without the lines it quotes and the "On ... wrote:" line (or two) introducing them."""
    lines = text.splitlines()
    keep = [not _QUOTED.match(line) for line in lines]
    for i in range(len(lines)):
        if keep[i] or (i and not keep[i - 1]):
            continue
        above = i - 1  # the first quoted line of a block: its introduction is the last written line above it
        while above >= 0 and not lines[above].strip():
            above -= 1
        if above >= 0 and _WROTE.match(lines[above]):
            keep[above] = False
            if not _ON.match(lines[above]) and above and _ON.match(lines[above - 1]):
                keep[above - 1] = False
    return "\n".join(line for line, kept in zip(lines, keep) if kept)


def message_document(msg: EmailMessage, kind: str) -> Document:
    """The document of a parsed message: its headers' block, then its body."""
    notes: list[str] = []
    shown: list[str] = []
    for name in SHOWN_HEADERS:
        value, ok = header(msg, name)
        if not ok:
            notes.append(f"{name} header could not be decoded: indexed as written")
        if value:
            shown.append(f"{name}: {value}")
    if header(msg, "Date")[0] and date_of(msg) is None:
        notes.append("Date header could not be read: its file's time is used")
    blocks = [Block("\n".join(shown))] if shown else []
    try:
        blocks += _body(msg, notes)
    except ReadError:
        raise
    except Exception as e:  # a body no decoding reads: the headers are still a document
        notes.append(f"body could not be read ({short_cause(e)})")
    subject, _ = header(msg, "Subject")
    return Document(title=subject or NO_SUBJECT, blocks=tuple(blocks), kind=kind, byline=byline(msg),
                    note="; ".join(notes) or None)


class MessageReader:
    """E-mail messages saved as files (``.eml``)."""

    name = "email"
    # the standard library's parser is Python, but an HTML body goes through lxml (readers/html.py)
    isolate = True
    extensions = (".eml",)

    def read(self, path: Path, limits: Limits) -> Document:
        """The message's headers and body, titled by its subject."""
        with parser_errors("e-mail message"):
            return message_document(parse(path.read_bytes()), self.name)


register(MessageReader())
