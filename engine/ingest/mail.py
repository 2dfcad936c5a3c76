"""Mailboxes read as the messages inside them, and messages as the attachments inside them (issue 57).

An mbox file (``.mbox``, or any file of no known format that starts as an mbox does), a Maildir folder (one that
holds ``cur``, ``new`` and ``tmp``) and an ``.eml`` file are containers, as a zip archive is
(``engine.ingest.archive``, which lists, names, limits and unpacks the members of both): a message is
``box.mbox/3`` (its place in the mbox, from 1) or ``Maildir/<key>``, and an attachment that a reader reads is
``box.mbox/3/report.pdf`` (``note.eml/report.pdf`` for an ``.eml``, which is itself the message's document). A
message is recorded with its length and its Date as its time, so that the date filter finds mail by when it was
sent and the next run rereads only what changed. Parsing is the standard library's (``mailbox``, ``email`` with its
modern policy): it reads damaged mail rather than raising, and what it cannot read is recorded on the message.
"""

from __future__ import annotations

import logging
import mailbox
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from email.message import EmailMessage, Message
from functools import lru_cache
from pathlib import Path
from typing import IO, Any, cast

from engine.errors import ReadError
from engine.filestate import FileState
from engine.ingest.documents import Listed
from engine.ingest.readers import BINARY_EXTENSIONS, reader_for_extension
from engine.ingest.readers.base import Limits
from engine.ingest.readers.guard import megabytes, short_cause
from engine.ingest.readers.message import attachments, date_of, parse, payload
from engine.ingest.walk import is_maildir

log = logging.getLogger(__name__)

MBOX_SUFFIXES = frozenset({".mbox", ".mbx"})
MESSAGE_SUFFIX = ".eml"
# An mbox's first line ("From alice@example.com Tue Mar  3 10:00:00 2024") and a header line after it.
_MBOX_START = re.compile(rb"From \S+.*\r?\n[!-9;-~]+:")
_SNIFF_BYTES = 1024
# Mailboxes kept open per process, and messages kept parsed: a reader process reads a task of a few members of one
# mailbox, often a message and its attachments, which would otherwise each list the mailbox and parse the message.
_OPEN_BOXES = 2
_PARSED = 4


def is_mailbox(path: Path) -> bool:
    """Whether ``path`` (a file or folder) is a container of mail: an mbox, a Maildir folder or an ``.eml`` file."""
    if os.path.isdir(path):
        return is_maildir(path)
    suffix = path.suffix.lower()
    if suffix in MBOX_SUFFIXES or suffix == MESSAGE_SUFFIX:
        return True
    # a file of no known format is looked at: Thunderbird's "Inbox" and mutt's "sent" have no extension
    return reader_for_extension(path) is None and suffix not in BINARY_EXTENSIONS and _starts_as_mbox(path)


def _starts_as_mbox(path: Path) -> bool:
    try:
        with path.open("rb") as f:
            return _MBOX_START.match(f.read(_SNIFF_BYTES)) is not None
    except OSError:
        return False


def _stamp(box: Path) -> tuple[int, ...]:
    """What changes when a mailbox does: an mbox's size and time, a Maildir's folders' times."""
    if os.path.isdir(box):
        return tuple(os.stat(box / part).st_mtime_ns for part in ("cur", "new"))
    st = os.stat(box)
    return st.st_size, st.st_mtime_ns


@lru_cache(maxsize=_OPEN_BOXES)
def _opened(box: str, stamp: tuple[int, ...]) -> tuple[mailbox.Mailbox[Any], dict[str, str]]:
    """The mailbox at ``box``, and its keys by the name each message has inside it (``stamp``: :func:`_stamp`)."""
    if os.path.isdir(box):
        folder = mailbox.Maildir(box, factory=None, create=False)
        return folder, {key: key for key in sorted(folder.keys())}
    mbox = mailbox.mbox(box, factory=None, create=False)
    return mbox, {str(place): key for place, key in enumerate(mbox.keys(), 1)}


def _is_eml(box: Path) -> bool:
    return box.suffix.lower() == MESSAGE_SUFFIX and not os.path.isdir(box)


@contextmanager
def _message_file(box: Path, name: str) -> Iterator[IO[bytes]]:
    """The bytes of the message ``name`` of ``box`` (an ``.eml``: the file itself); KeyError when it is gone."""
    if _is_eml(box):
        with box.open("rb") as f:
            yield f
        return
    opened, keys = _opened(str(box), _stamp(box))
    with opened.get_file(keys[name]) as f:
        yield cast(IO[bytes], f)  # typeshed's proxy file lacks IO's full surface; read, seek and tell are all we use


def _length(f: IO[bytes]) -> int:
    f.seek(0, os.SEEK_END)  # a mailbox's message file returns no position from seek: tell() gives it
    size = f.tell()
    f.seek(0)
    return size


def _message_bytes(box: Path, name: str, limits: Limits) -> bytes:
    """The message's bytes; ReadError for one over the file size limit, which is never read into memory."""
    with _message_file(box, name) as f:
        size = _length(f)
        if size > limits.max_file_bytes:
            raise ReadError(f"too large: a message of {megabytes(size)} MB, over the "
                            f"{megabytes(limits.max_file_bytes)} MB limit", status=FileState.SKIPPED)
        return f.read()


@lru_cache(maxsize=_PARSED)
def _parsed(box: str, stamp: tuple[int, ...], name: str, limits: Limits) -> tuple[bytes, EmailMessage]:
    """The bytes and the parsed message ``name`` of ``box`` as it was at ``stamp``."""
    data = _message_bytes(Path(box), name, limits)
    return data, parse(data)


def _message(box: Path, name: str, limits: Limits) -> tuple[bytes, EmailMessage]:
    return _parsed(str(box), _stamp(box), name, limits)


def parts(box: Path, limits: Limits) -> list[Listed]:
    """The messages of ``box`` and their attachments that a reader reads; raises ReadError for a mailbox that
    cannot be opened. A message that cannot be parsed is listed alone: its record says why when it is read."""
    fallback = os.stat(box).st_mtime
    try:
        names = [""] if _is_eml(box) else list(_opened(str(box), _stamp(box))[1])
    except (OSError, mailbox.Error, ValueError) as e:
        raise ReadError(f"mailbox could not be listed ({short_cause(e)})") from e
    out: list[Listed] = []
    for name in names:
        try:
            out += _message_parts(box, name, limits, fallback)
        except KeyError:
            continue  # gone since the listing (a Maildir message moved from new/ to cur/ keeps its key)
        except Exception:  # listed alone; reading it gives the reason
            log.debug("message %s of %s not parsed for its attachments", name, box, exc_info=True)
            out.append(Listed(name, 0, fallback))
    return out


def _message_parts(box: Path, name: str, limits: Limits, fallback: float) -> list[Listed]:
    """The message ``name`` (none for an ``.eml``, whose file is its document) and its attachments."""
    try:
        data, msg = _message(box, name, limits)
    except ReadError:  # too large or no message: listed, so that its record says so
        with _message_file(box, name) as f:
            return [Listed(name, _length(f), fallback)] if name else []
    when = date_of(msg)
    mtime = fallback if when is None else when
    prefix = f"{name}/" if name else ""
    found = [Listed(name, len(data), mtime)] if name else []
    return found + [Listed(prefix + file_name, _encoded_size(part), mtime) for file_name, part in attachments(msg)]


def _encoded_size(part: Message) -> int:
    """An attachment's length as the message carries it (its decoded bytes are counted when it is unpacked)."""
    body = part.get_payload()
    return len(body) if isinstance(body, (str, bytes)) else 0


def split(box: Path, name: str) -> tuple[str, str | None]:
    """(message, attachment or None) that ``name`` names inside ``box``."""
    if _is_eml(box):
        return "", name
    message, _, attachment = name.partition("/")
    return message, attachment or None


def part(box: Path, name: str, limits: Limits) -> Listed:
    """The message or attachment ``name`` of ``box`` as :func:`parts` lists it; KeyError when it is gone."""
    message, attachment = split(box, name)
    fallback = os.stat(box).st_mtime
    try:
        listed = _message_parts(box, message, limits, fallback)
    except (OSError, mailbox.Error, ValueError) as e:
        raise ReadError(f"mailbox could not be read ({short_cause(e)})") from e
    found = next((p for p in listed if p.name == name), None)
    if found is None:
        raise KeyError(name)
    return found


def content(box: Path, name: str, limits: Limits) -> tuple[str, bytes]:
    """The file name a member is read under (a message as ``<name>.eml``) and its bytes; KeyError when it is gone,
    ReadError for a message too large or damaged."""
    message, attachment = split(box, name)
    data, msg = _message(box, message, limits)
    if attachment is None:
        return f"{message}{MESSAGE_SUFFIX}", data
    for file_name, found in attachments(msg):
        if file_name == attachment:
            return file_name, payload(found)
    raise KeyError(name)
