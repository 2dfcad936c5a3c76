"""Zip archives read as the documents inside them, as Recoll reads them (issue 34), and mail as its messages and
their attachments (``engine.ingest.mail``, issue 57: ``box.mbox/3/report.pdf``), named, limited and unpacked alike.

A member is indexed under a path of its own, the archive's path joined with its name inside
(``~/mail/attachments.zip/report/summary.pdf``): no real file can have that path, since the archive is a file, so
the path says which archive and which member, searches filter and remove by folder as for any file, and a member
that leaves the archive leaves the index as a deleted file does. The members are listed from the archive's central
directory (one small read); each is unpacked, when it is read, into a private temporary folder under its own name and
read there by the reader for that name. Unpacking stops at the archive limits (:class:`Limits`), counted as bytes
are written, never taken from a header.
"""

from __future__ import annotations

import io
import logging
import os
import re
import stat
import tempfile
import time
import zipfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from engine.errors import ReadError
from engine.filestate import FileState
from engine.ingest import mail
from engine.ingest.documents import Listed
from engine.ingest.readers.base import Limits
from engine.ingest.readers.guard import short_cause
from engine.ingest.readers.unpack import copy_within
from engine.ingest.readers.zipguard import allowance, check_declared
from engine.ingest.walk import IgnoreRules, is_maildir

log = logging.getLogger(__name__)

ARCHIVE_SUFFIXES = frozenset({".zip"})
# An archive of more members than this is a backup or a dataset rather than a bundle of documents; its first members
# are indexed and the rest are reported in the archive's own record.
MAX_MEMBERS = 10_000
# The longest file name most file systems take, in bytes.
NAME_BYTES = 255
# What _name_problem says of a folder's entry, which is no document and needs no note.
_FOLDER = "a folder"
# A Windows drive at the start of a name: absolute there, whatever POSIX makes of it.
_DRIVE = re.compile(r"^[A-Za-z]:")
_DAMAGE = (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError, NotImplementedError, RuntimeError,
           OSError)


@dataclass(frozen=True)
class Member:
    """A document inside an archive: its indexed path, unpacked size and the time stamp the archive gives it."""

    path: str
    size: int
    mtime: float


def _is_zip(path: Path) -> bool:
    return path.suffix.lower() in ARCHIVE_SUFFIXES


def is_archive(path: Path) -> bool:
    """Whether ``path`` names a container whose members are indexed as documents: a zip archive, or mail (an mbox,
    a Maildir folder, an ``.eml`` file and its attachments)."""
    return _is_zip(path) or mail.is_mailbox(path)


def members(archive: Path, limits: Limits, rules: IgnoreRules) -> tuple[list[Member], str | None]:
    """The archive's members worth reading (not folders, not encrypted, not ignored by ``rules``, with a name that
    can be a path inside it), and a note for the archive's record when some were left out; raises ReadError for an
    archive that cannot be listed or would unpack past ``limits``. Nothing a hostile archive holds raises anything
    else: planning a run lists every archive, and one must not end the run. An ``.eml`` file is listed first
    itself, the message's own document, then its attachments."""
    fmt = "zip archive" if _is_zip(archive) else "mailbox"
    try:
        if not _is_zip(archive):
            return _mail_members(archive, limits, rules)
        with zipfile.ZipFile(archive) as opened:
            infos = opened.infolist()
        # the declared sizes only: each member's bytes are counted when it is unpacked, so listing stays one read
        check_declared(infos, archive.stat().st_size, limits, fmt)
        return _worth_reading(archive, [Listed(i.filename, i.file_size, _timestamp(i), bool(i.flag_bits & 0x1))
                                        for i in infos], rules)
    except ReadError:
        raise
    except _DAMAGE as e:
        raise ReadError(f"corrupt {fmt}: not a valid {fmt} ({short_cause(e)})") from e
    except Exception as e:  # a listing no archive should give: recorded on the archive, logged for a bug report
        log.warning("could not list the %s %s", fmt, archive, exc_info=True)
        raise ReadError(f"{fmt} could not be listed ({short_cause(e)})") from e


def _mail_members(box: Path, limits: Limits, rules: IgnoreRules) -> tuple[list[Member], str | None]:
    """:func:`members` of mail (``engine.ingest.mail``)."""
    if mail.MESSAGE_SUFFIX == box.suffix.lower() and not box.is_dir():
        st = box.stat()
        itself = Member(str(box), st.st_size, st.st_mtime)
        try:  # the message is read whatever its attachments are
            found, note = _worth_reading(box, mail.parts(box, limits), rules)
        except Exception:
            log.debug("attachments of %s not listed", box, exc_info=True)
            found, note = [], None
        return [itself, *found], note
    return _worth_reading(box, mail.parts(box, limits), rules)


def _worth_reading(archive: Path, entries: list[Listed], rules: IgnoreRules) -> tuple[list[Member], str | None]:
    """:func:`members` of a listing that passed its size checks."""
    left_out: Counter[str] = Counter()
    by_name: dict[str, Listed] = {}
    for entry in entries:
        problem = _name_problem(entry.name) or ("encrypted" if entry.encrypted else None)
        if problem is not None:
            left_out[problem] += problem != _FOLDER
            continue
        name = PurePosixPath(entry.name)
        if any(rules.ignored("/".join(name.parts[: i + 1]), part, i < len(name.parts) - 1)
               for i, part in enumerate(name.parts)):
            continue
        if entry.name in by_name:
            left_out["with the same name as a later member"] += 1
        by_name[entry.name] = entry  # zipfile unpacks the last member of a name, so that one is indexed
    found = [_member(archive, entry) for entry in by_name.values()]
    notes = [f"{n} {why} member{'s' if n > 1 else ''} not read" if why == "encrypted"
             else f"{n} member{'s' if n > 1 else ''} {why} not read" for why, n in left_out.items() if n]
    if len(found) > MAX_MEMBERS:
        notes.append(f"{len(found) - MAX_MEMBERS:,} members past the first {MAX_MEMBERS:,} not read")
        found = found[:MAX_MEMBERS]
    return found, "; ".join(notes) or None


def _name_problem(filename: str) -> str | None:
    """Why a member's name cannot be a path inside its archive (None when it can; :data:`_FOLDER` for a folder).

    Only a name already in the form its path gives back is taken: ``a/./b`` and ``a//b`` would both be indexed as
    ``a/b``, which then names neither when the member is unpacked, and a name that climbs out (``../x``, ``/etc/x``,
    ``C:/x``) is no path inside the archive at all.
    """
    if filename.endswith("/"):
        return _FOLDER
    name = PurePosixPath(filename)
    if not filename or name.is_absolute() or ".." in name.parts or _DRIVE.match(filename):
        return "with a name that leads out of the archive" if filename else "with an empty name"
    if "/".join(name.parts) != filename or "\x00" in filename:
        return "with a name that is no plain path"
    return None


def member_of(path: Path) -> tuple[Path, str] | None:
    """(archive, name inside it) when ``path`` is an archive member's indexed path; None for any other path. A path
    that is there is none (a file, the common case, costs one stat); else the nearest parent that is there says:
    a zip archive, a mailbox file or a Maildir folder holds it."""
    if os.path.lexists(path):
        return None
    for parent in path.parents:
        try:
            mode = os.stat(parent).st_mode
        except (FileNotFoundError, NotADirectoryError):
            continue  # inside a member's name, or a folder gone
        except OSError:
            return None
        inside = stat.S_ISREG(mode) and is_archive(parent) or stat.S_ISDIR(mode) and is_maildir(parent)
        return (parent, path.relative_to(parent).as_posix()) if inside else None
    return None


@contextmanager
def _member_errors(archive: Path) -> Iterator[None]:
    """A member gone from its archive, or a damaged archive, as the ReadError its record shows."""
    try:
        yield
    except KeyError as e:
        raise ReadError("no longer in its archive", status=FileState.SKIPPED) from e
    except ReadError:
        raise
    except _DAMAGE as e:
        raise ReadError(f"corrupt {'zip archive' if _is_zip(archive) else 'mailbox'}: {short_cause(e)}") from e
    except Exception as e:  # mailbox and email raise their own on hostile mail: recorded on the member
        if _is_zip(archive):
            raise
        log.debug("mail member of %s not read", archive, exc_info=True)
        raise ReadError(f"corrupt e-mail message: {short_cause(e)}") from e


def describe(archive: Path, name: str, limits: Limits) -> Member:
    """The member ``name`` of ``archive`` as its listing gives it; ReadError when it is gone or the archive damaged."""
    with _member_errors(archive):
        if not _is_zip(archive):
            return _member(archive, mail.part(archive, name, limits))
        with zipfile.ZipFile(archive) as opened:
            info = opened.getinfo(name)
            return _member(archive, Listed(info.filename, info.file_size, _timestamp(info)))


@contextmanager
def unpacked(archive: Path, name: str, limits: Limits) -> Iterator[Path]:
    """The member ``name`` of ``archive`` as a file of its own name in a private temporary folder, removed after."""
    with tempfile.TemporaryDirectory(prefix="quire-member-") as folder:
        yield _unpack(archive, name, limits, Path(folder) / _local_name(PurePosixPath(name).name))


def _local_name(name: str) -> str:
    """``name`` as a file name the temporary folder can hold: a member's name may be longer than a file system
    allows (255 bytes), and only its ending (which picks the reader) matters there."""
    if len(os.fsencode(name)) <= NAME_BYTES:
        return name
    suffix = PurePosixPath(name).suffix
    suffix = suffix if len(os.fsencode(suffix)) < NAME_BYTES // 2 else ""
    return "member" + suffix


def _unpack(archive: Path, name: str, limits: Limits, target: Path) -> Path:
    """Write the member to ``target`` (a message to ``target`` named as ``<name>.eml``); returns where it is."""
    with _member_errors(archive):
        if not _is_zip(archive):
            local, data = mail.content(archive, name, limits)
            target = target.with_name(_local_name(local))
            # a message is held to the file size limit (engine.ingest.mail) as a file is; an attachment, decoded
            # base64 or quoted-printable, to the unpacked limit as an archive's member is
            attachment = mail.split(archive, name)[1] is not None
            copy_within(io.BytesIO(data), target, limits.max_unpacked_bytes if attachment else len(data) or 1,
                        "attachment")
            return target
        with zipfile.ZipFile(archive) as opened:
            info = opened.getinfo(name)
            with opened.open(info) as source:
                copy_within(source, target, allowance(info.compress_size, limits), "archive member")
        return target


def _member(archive: Path, entry: Listed) -> Member:
    return Member(os.path.join(archive, *PurePosixPath(entry.name).parts), entry.size, entry.mtime)


def _timestamp(info: zipfile.ZipInfo) -> float:
    """The member's modification time as the archive records it (local time, two-second steps)."""
    try:
        return time.mktime((*info.date_time, 0, 0, -1))
    except (OverflowError, ValueError):
        return 0.0
