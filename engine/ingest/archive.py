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
from engine.ingest.readers.base import Limits
from engine.ingest.readers.guard import short_cause
from engine.ingest.readers.unpack import copy_within
from engine.ingest.readers.zipguard import allowance, check_declared
from engine.ingest.walk import IgnoreRules

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


def is_archive(path: Path) -> bool:
    """Whether ``path`` names an archive whose members are indexed as documents."""
    return path.suffix.lower() in ARCHIVE_SUFFIXES


def members(archive: Path, limits: Limits, rules: IgnoreRules) -> tuple[list[Member], str | None]:
    """The archive's members worth reading (not folders, not encrypted, not ignored by ``rules``, with a name that
    can be a path inside it), and a note for the archive's record when some were left out; raises ReadError for an
    archive that cannot be listed or would unpack past ``limits``. Nothing a hostile archive holds raises anything
    else: planning a run lists every archive, and one must not end the run."""
    try:
        with zipfile.ZipFile(archive) as opened:
            infos = opened.infolist()
        # the declared sizes only: each member's bytes are counted when it is unpacked, so listing stays one read
        check_declared(infos, archive.stat().st_size, limits, "zip archive")
        return _worth_reading(archive, infos, rules)
    except ReadError:
        raise
    except _DAMAGE as e:
        raise ReadError(f"corrupt zip archive: not a valid zip archive ({short_cause(e)})") from e
    except Exception as e:  # a listing no archive should give: recorded on the archive, logged for a bug report
        log.warning("could not list the zip archive %s", archive, exc_info=True)
        raise ReadError(f"zip archive could not be listed ({short_cause(e)})") from e


def _worth_reading(archive: Path, infos: list[zipfile.ZipInfo], rules: IgnoreRules) -> tuple[list[Member], str | None]:
    """:func:`members` of a listing that passed its size checks."""
    left_out: Counter[str] = Counter()
    by_name: dict[str, zipfile.ZipInfo] = {}
    for info in infos:
        problem = _name_problem(info.filename) or ("encrypted" if info.flag_bits & 0x1 else None)
        if problem is not None:
            left_out[problem] += problem != _FOLDER
            continue
        name = PurePosixPath(info.filename)
        if any(rules.ignored("/".join(name.parts[: i + 1]), part, i < len(name.parts) - 1)
               for i, part in enumerate(name.parts)):
            continue
        if info.filename in by_name:
            left_out["with the same name as a later member"] += 1
        by_name[info.filename] = info  # zipfile unpacks the last member of a name, so that one is indexed
    found = [_member(archive, info) for info in by_name.values()]
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
        target = Path(folder) / _local_name(PurePosixPath(name).name)
        _unpack(archive, name, limits, target)
        yield target


def _local_name(name: str) -> str:
    """``name`` as a file name the temporary folder can hold: a member's name may be longer than a file system
    allows (255 bytes), and only its ending (which picks the reader) matters there."""
    if len(os.fsencode(name)) <= NAME_BYTES:
        return name
    suffix = PurePosixPath(name).suffix
    suffix = suffix if len(os.fsencode(suffix)) < NAME_BYTES // 2 else ""
    return "member" + suffix


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
