"""Zip archives: their members indexed as documents under ``archive.zip/member`` paths (issue 34), with the limits
the zip-based formats have; a member that leaves the archive leaves the index, and the archive's removal takes all."""

from __future__ import annotations

import os
import warnings
import zipfile
from pathlib import Path

import docgen
import pytest

from engine import Filters, Index, IndexConfig, Mode
from engine.filestate import FileState

NOTES = "Beavers build dams of branches and mud across slow streams.\n"
MINUTES = "The committee approved the new harbour lighthouse budget on Tuesday.\n"


def bundle(folder: Path, members: dict[str, bytes], name: str = "bundle.zip") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    archive = folder / name
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as out:
        for member, data in members.items():
            out.writestr(member, data)
    return archive


def encrypt_flag(archive: Path, member: str) -> None:
    """Mark ``member`` encrypted (general purpose bit 0) in its local header and its central directory entry, as a
    password-protected archive has it; zipfile cannot write encrypted members itself."""
    data = bytearray(archive.read_bytes())
    name = member.encode()
    for signature, flag_at, name_at in ((b"PK\x03\x04", 6, 30), (b"PK\x01\x02", 8, 46)):
        start = 0
        while (start := data.find(signature, start)) >= 0:
            if data[start + name_at:start + name_at + len(name)] == name:
                data[start + flag_at] |= 0x1
            start += 4
    archive.write_bytes(bytes(data))


def files(idx: Index) -> dict[str, dict]:
    return {f.path: f for f in idx.status(files=True).files}


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    (tmp_path / "made").mkdir()
    made = docgen.make_docx(tmp_path / "made")
    folder = tmp_path / "docs"
    bundle(folder, {
        "notes.txt": NOTES.encode(),
        "reports/2024/minutes.docx": made.read_bytes(),
        "__MACOSX/reports/._minutes.docx": b"\x00\x05\x16\x07 resource fork",
        ".hidden.txt": b"A hidden note.\n",
    })
    (folder / "loose.txt").write_text("A loose file beside the archive.\n", encoding="utf-8")
    return folder


def test_members_are_documents_with_their_own_paths_and_readers(docs: Path, tmp_path: Path) -> None:
    archive = docs / "bundle.zip"
    with Index(tmp_path / "index", config=IndexConfig(workers=0)) as idx:
        report = idx.add([docs])
        listed = files(idx)
        assert set(listed) == {str(docs / "loose.txt"), str(archive / "notes.txt"),
                               str(archive / "reports" / "2024" / "minutes.docx")}
        assert report.documents == 3 and not report.issues
        member = listed[str(archive / "reports" / "2024" / "minutes.docx")]
        assert member.status == FileState.INDEXED and member.kind == "docx"
        sentence, title = docgen.EXPECTED["docx"]
        assert member.title == title
        top = idx.search(sentence, k=3, mode=Mode.LEXICAL).results[0]
        assert top.path == str(archive / "reports" / "2024" / "minutes.docx")
        beavers = idx.search("rodents building river dams", k=1).results[0]
        assert beavers.path == str(archive / "notes.txt") and beavers.sentence == NOTES.strip()
        # a folder filter covers members as it covers files
        inside = Filters(folders=(str(archive / "reports"),))
        assert [r.path for r in idx.search("report", k=5, within=inside).results] == [
            str(archive / "reports" / "2024" / "minutes.docx")]


def test_a_changed_archive_rereads_only_changed_members_and_drops_the_missing(docs: Path, tmp_path: Path) -> None:
    archive = docs / "bundle.zip"
    with Index(tmp_path / "index", config=IndexConfig(workers=0)) as idx:
        idx.add([docs])
        assert idx.add([docs]).unchanged == 3  # nothing changed: nothing read
        with zipfile.ZipFile(archive) as old:
            kept = old.read("reports/2024/minutes.docx"), old.getinfo("reports/2024/minutes.docx").date_time
        with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as out:
            out.writestr(zipfile.ZipInfo("reports/2024/minutes.docx", kept[1]), kept[0])
            out.writestr(zipfile.ZipInfo("agenda.txt", (2025, 1, 2, 3, 4, 6)), MINUTES)
        report = idx.add([docs])
        assert (report.documents, report.unchanged, report.removed) == (1, 2, 1)
        listed = files(idx)
        assert str(archive / "notes.txt") not in listed
        assert listed[str(archive / "agenda.txt")].status == FileState.INDEXED
        assert idx.search("beavers", k=5, mode=Mode.LEXICAL).results == ()
        assert idx.search("lighthouse budget", k=1).results[0].path == str(archive / "agenda.txt")


def test_removing_the_archive_removes_its_members(docs: Path, tmp_path: Path) -> None:
    archive = docs / "bundle.zip"
    with Index(tmp_path / "index", config=IndexConfig(workers=0)) as idx:
        idx.add([docs])
        assert idx.remove([archive]) == 2
        assert set(files(idx)) == {str(docs / "loose.txt")}
        idx.add([docs])
        os.remove(archive)  # deleted from disk: gone at the next run, as a file is
        assert idx.add([docs]).removed == 2
        assert set(files(idx)) == {str(docs / "loose.txt")}


def test_bad_archives_are_recorded_with_a_reason_and_the_rest_is_indexed(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    bundle(folder, {"zeros.txt": b"0" * 60_000_000}, "bomb.zip")  # 60 MB of one byte: a zip bomb by its ratio
    (folder / "broken.zip").write_bytes(b"PK\x03\x04 this is not really a zip archive")
    locked = bundle(folder, {"open.txt": NOTES.encode(), "secret.txt": b"ciphertext"}, "locked.zip")
    encrypt_flag(locked, "secret.txt")
    with Index(tmp_path / "index", config=IndexConfig(workers=0)) as idx:
        report = idx.add([folder])
        listed = files(idx)
        assert listed[str(folder / "bomb.zip")].status == FileState.SKIPPED
        assert listed[str(folder / "bomb.zip")].reason.startswith("zip bomb?")
        assert listed[str(folder / "broken.zip")].status == FileState.FAILED
        assert listed[str(folder / "broken.zip")].reason.startswith("corrupt zip archive")
        assert listed[str(locked / "open.txt")].status == FileState.INDEXED
        assert str(locked / "secret.txt") not in listed
        assert any(i.path == str(locked) and "1 encrypted member not read" in i.reason for i in report.issues)
        assert listed[str(locked)].reason == "1 encrypted member not read"  # in `status` too, not only the run


def test_a_member_that_inflates_past_its_stated_size_stops_at_the_limit(tmp_path: Path) -> None:
    from engine.errors import ReadError
    from engine.ingest.archive import unpacked
    from engine.ingest.readers.base import Limits

    archive = bundle(tmp_path, {"big.txt": b"word " * 400_000})  # 2 MB of text, about 2 KB packed
    with pytest.raises(ReadError) as caught, unpacked(archive, "big.txt", Limits(max_unpacked_bytes=1_000_000)):
        pass
    assert caught.value.status == FileState.SKIPPED
    assert "archive member unpacks to more than 1 MB" in caught.value.reason


def test_a_member_opens_from_a_read_only_copy_and_reveals_its_archive(docs: Path, tmp_path: Path) -> None:
    from app.gui.launch import OpenRequest, launch_for, local_request

    archive, copies = docs / "bundle.zip", tmp_path / "copies"
    copies.mkdir()
    member = str(archive / "notes.txt")
    opened = local_request(OpenRequest(member, sentence=NOTES.strip()), copies)
    copy = Path(opened.path)
    assert copy.name == "notes.txt" and copy.is_relative_to(copies) and copy.read_text(encoding="utf-8") == NOTES
    assert not os.access(copy, os.W_OK) or os.geteuid() == 0
    assert launch_for(opened, "linux").argv[-1] == str(copy)
    assert local_request(OpenRequest(member, reveal=True), copies).path == str(archive)
    loose = OpenRequest(str(docs / "loose.txt"))
    assert local_request(loose, copies) is loose


def test_a_compressed_file_opens_as_the_file_inside_at_the_passage(tmp_path: Path) -> None:
    """No viewer opens FAQ.gz ("no method available"): the text inside is opened from a read-only copy, at its line
    where an editor takes one."""
    import gzip

    from app.gui.launch import OpenRequest, launch_for, local_request

    copies = tmp_path / "copies"
    copies.mkdir()
    faq = tmp_path / "FAQ.gz"
    faq.write_bytes(gzip.compress(b"Questions.\n\nHow do I reset the tuner?\nHold the button for ten seconds.\n"))
    opened = local_request(OpenRequest(str(faq), sentence="Hold the button for ten seconds."), copies)
    copy = Path(opened.path)
    assert copy.name == "FAQ" and copy.is_relative_to(copies) and copy.read_text().startswith("Questions.")
    assert not os.access(copy, os.W_OK) or os.geteuid() == 0
    from app.gui import launch
    from app.gui.open_at_line import line_command

    argv = line_command(opened.path, lambda: launch._line(opened), platform="linux",
                        default_app=lambda: "org.gnome.gedit.desktop", which=lambda name: f"/usr/bin/{name}")
    assert argv is not None and argv[-2:] == ["+4", str(copy)]  # the passage's line in the text inside
    assert launch_for(opened, "linux").argv[-1] == str(copy)
    assert local_request(OpenRequest(str(faq), reveal=True), copies).path == str(faq)
    gone = OpenRequest(str(tmp_path / "gone.gz"))
    assert local_request(gone, copies) is gone  # the window then says it is no longer there


def hostile_bundle(folder: Path, names: list[str]) -> Path:
    """An archive whose members have these names exactly, as a hostile tool writes them (zipfile would clean a name
    given to ZipInfo, so each is set after)."""
    folder.mkdir(parents=True, exist_ok=True)
    archive = folder / "hostile.zip"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns of a duplicate name, which is the point
        with zipfile.ZipFile(archive, "w") as out:
            for name in names:
                info = zipfile.ZipInfo("x")
                info.filename = name
                out.writestr(info, MINUTES.encode())
    return archive


@pytest.mark.parametrize(("names", "why"), [
    ([""], "1 member with an empty name not read"),  # was IndexError in info.is_dir(), ending the run unsaved
    (["../../escaped.txt", "/etc/absolute.txt", "C:/drive.txt"], "3 members with a name that leads out of the archive"),
    (["a/./b.txt", "a//b.txt", "."], "3 members with a name that is no plain path"),
    (["twice.txt", "twice.txt"], "1 member with the same name as a later member"),
])
def test_a_hostile_member_name_is_recorded_on_its_archive_and_the_run_goes_on(tmp_path: Path, names: list[str],
                                                                                why: str) -> None:
    folder = tmp_path / "docs"
    archive = hostile_bundle(folder, names)
    for n in range(10):
        (folder / f"good{n}.txt").write_text(f"Good note {n}: {NOTES}", encoding="utf-8")
    with Index(tmp_path / "index", config=IndexConfig(workers=0)) as idx:
        report = idx.add([folder])
        listed = files(idx)
    assert sum(f.status == FileState.INDEXED and "good" in f.path for f in listed.values()) == 10
    record = listed[str(archive)]  # in `status`, not only in the run's report
    assert record.status == FileState.SKIPPED and why in record.reason
    assert any(i.path == str(archive) and why in i.reason for i in report.issues)
    assert [p for p in listed if p.startswith(str(archive) + "/")] == (
        [str(archive / "twice.txt")] if "twice.txt" in names else [])


def test_an_archive_note_goes_once_the_member_is_gone(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    archive = hostile_bundle(folder, ["", "kept.txt"])
    with Index(tmp_path / "index", config=IndexConfig(workers=0)) as idx:
        idx.add([folder])
        assert files(idx)[str(archive)].status == FileState.SKIPPED
        hostile_bundle(folder, ["kept.txt"])
        os.utime(archive, (1, 1))
        idx.add([folder])
        assert str(archive) not in files(idx) and files(idx)[str(archive / "kept.txt")].status == FileState.INDEXED


def test_a_member_name_longer_than_a_file_name_may_be_is_read(tmp_path: Path) -> None:
    name = "m" * 300 + ".txt"  # unpacked under its own name, it failed as a corrupt archive (ENAMETOOLONG)
    archive = hostile_bundle(tmp_path / "docs", [name])
    with Index(tmp_path / "index", config=IndexConfig(workers=0)) as idx:
        idx.add([tmp_path / "docs"])
        assert files(idx)[str(archive / name)].status == FileState.INDEXED
