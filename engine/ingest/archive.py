"""Zip archives read as the documents inside them, as Recoll reads them (issue 34).

A member is indexed under a path of its own, the archive's path joined with its name inside
(``~/mail/attachments.zip/report/summary.pdf``): no real file can have that path, since the archive is a file, so
the path says which archive and which member, searches filter and remove by folder as for any file, and a member
that leaves the archive leaves the index as a deleted file does. The members are listed from the archive's central
directory (one small read); each is unpacked, when it is read, into a private temporary folder under its own name and
read there by the reader for that name. Unpacking stops at the archive limits (:class:`Limits`), counted as bytes
are written, never taken from a header.
"""

from __future__ import annotations

import os
import stat
import tempfile
import time
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from engine.errors import ReadError
from engine.ingest.readers.base import Limits
from engine.ingest.readers.guard import short_cause
from engine.ingest.readers.unpack import copy_within
from engine.ingest.readers.zipguard import allowance, check_declared
from engine.ingest.walk import IgnoreRules

ARCHIVE_SUFFIXES = frozenset({".zip"})
# An archive of more members than this is a backup or a dataset rather than a bundle of documents; its first members
# are indexed and the rest are reported in the archive's own record.
MAX_MEMBERS = 10_000
_DAMAGE = (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError, NotImplementedError, RuntimeError,
           OSError)


@dataclass(frozen=True)
class Member:
    """A document inside an archive: its indexed path, unpacked size and the time stamp the archive gives it."""

    path: str
    size: int
    mtime: float


def is_archive(path: Path) -> bool:
    """Whether ``path`` names an archive whose members are indexed as documents."""
    return path.suffix.lower() in ARCHIVE_SUFFIXES


def members(archive: Path, limits: Limits, rules: IgnoreRules) -> tuple[list[Member], str | None]:
    """The archive's members worth reading (not folders, not encrypted, not ignored by ``rules``), and a note for
    the archive's record when some were left out; raises ReadError for an archive that cannot be listed or would
    unpack past ``limits``."""
    try:
        with zipfile.ZipFile(archive) as opened:
            infos = opened.infolist()
    except _DAMAGE as e:
        raise ReadError(f"corrupt zip archive: not a valid zip archive ({short_cause(e)})") from e
    # the declared sizes only: each member's bytes are counted when it is unpacked, so listing stays one small read
    check_declared(infos, archive.stat().st_size, limits, "zip archive")
    found, encrypted = [], 0
    for info in infos:
        name = PurePosixPath(info.filename)
        if info.is_dir() or name.is_absolute() or ".." in name.parts or not name.parts:
            continue
        if any(rules.ignored("/".join(name.parts[: i + 1]), part, i < len(name.parts) - 1)
               for i, part in enumerate(name.parts)):
            continue
        if info.flag_bits & 0x1:
            encrypted += 1
            continue
        found.append(_member(archive, info))
    notes = []
    if encrypted:
        notes.append(f"{encrypted} encrypted member{'s' if encrypted > 1 else ''} not read")
    if len(found) > MAX_MEMBERS:
        notes.append(f"{len(found) - MAX_MEMBERS:,} members past the first {MAX_MEMBERS:,} not read")
        found = found[:MAX_MEMBERS]
    return found, "; ".join(notes) or None


def member_of(path: Path) -> tuple[Path, str] | None:
    """(archive, name inside it) when ``path`` is an archive member's indexed path; None for any other path."""
    for parent in path.parents:
        if is_archive(parent):
            try:
                if stat.S_ISREG(os.stat(parent).st_mode):
                    return parent, path.relative_to(parent).as_posix()
            except OSError:
                return None
    return None


@contextmanager
def _member_errors() -> Iterator[None]:
    """A member gone from its archive, or a damaged archive, as the ReadError its record shows."""
    try:
        yield
    except KeyError as e:
        raise ReadError("no longer in its archive", status="skipped") from e
    except _DAMAGE as e:
        raise ReadError(f"corrupt zip archive: {short_cause(e)}") from e


def describe(archive: Path, name: str) -> Member:
    """The member ``name`` of ``archive`` as its listing gives it; ReadError when it is gone or the archive damaged."""
    with _member_errors(), zipfile.ZipFile(archive) as opened:
        return _member(archive, opened.getinfo(name))


@contextmanager
def unpacked(archive: Path, name: str, limits: Limits) -> Iterator[Path]:
    """The member ``name`` of ``archive`` as a file of its own name in a private temporary folder, removed after."""
    with tempfile.TemporaryDirectory(prefix="quire-member-") as folder:
        target = Path(folder) / PurePosixPath(name).name
        _unpack(archive, name, limits, target)
        yield target


def _unpack(archive: Path, name: str, limits: Limits, target: Path) -> None:
    with _member_errors(), zipfile.ZipFile(archive) as opened:
        info = opened.getinfo(name)
        with opened.open(info) as source:
            copy_within(source, target, allowance(info.compress_size, limits), "archive member")


def _member(archive: Path, info: zipfile.ZipInfo) -> Member:
    return Member(os.path.join(archive, *PurePosixPath(info.filename).parts), info.file_size, _timestamp(info))


def _timestamp(info: zipfile.ZipInfo) -> float:
    """The member's modification time as the archive records it (local time, two-second steps)."""
    try:
        return time.mktime((*info.date_time, 0, 0, -1))
    except (OverflowError, ValueError):
        return 0.0
