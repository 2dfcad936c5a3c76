"""Mail (issue 57): an mbox, a Maildir folder and an ``.eml`` file indexed as one document per message, titled by
its subject, under ``box.mbox/3`` paths, with attachments as documents of their own (``box.mbox/3/report.pdf``);
the sender finds the message, its date is its time for the date filter, and hostile mail is recorded, not raised.

Every mailbox is generated here with the standard library (``email.message.EmailMessage``, ``mailbox``).
"""

from __future__ import annotations

import mailbox
from email.message import EmailMessage
from pathlib import Path

import docgen
import pytest

from engine import Filters, Index, IndexConfig, Mode
from engine.filestate import FileState
from engine.ingest.readers.base import Limits
from engine.store.meta import Key

LIGHTHOUSE = "The committee approved the new harbour lighthouse budget on Tuesday."
CROISSANTS = "We bake almond croissants for the village fair every spring."
BEAVERS = "Beavers build dams of branches and mud across slow streams."
GLACIER = "The glacier retreated forty metres since the last survey."
MARCH_2024 = "Tue, 05 Mar 2024 10:00:00 +0000"
JUNE_2019 = "Mon, 03 Jun 2019 08:30:00 +0000"


def message(subject: str, sender: str, body: str, date: str = MARCH_2024, *, reply: bool = False,
            pdf: bytes | None = None) -> EmailMessage:
    out = EmailMessage()
    out["From"] = sender
    out["To"] = "Ivo Brandt <ivo@example.com>, Team <team@example.com>"
    out["Date"] = date
    out["Subject"] = subject
    if reply:
        out["In-Reply-To"] = "<earlier@example.com>"
    out.set_content(body)
    if pdf is not None:
        out.add_attachment(pdf, maintype="application", subtype="pdf", filename="report.pdf")
    return out


@pytest.fixture
def mail(tmp_path: Path) -> Path:
    """An mbox of two messages (one with a PDF, one a reply quoting it), a Maildir of one, and an ``.eml``."""
    folder = tmp_path / "mail"
    folder.mkdir()
    pdf = docgen.make_pdf(tmp_path).read_bytes()
    box = mailbox.mbox(str(folder / "box.mbox"))
    box.add(message("Harbour lighthouse", "Gwendolyn Okafor <gwen@example.com>", LIGHTHOUSE, pdf=pdf))
    box.add(message("=?utf-8?q?Caf=C3=A9_fair?=", "Bob Lindqvist <bob@example.com>",
                    f"{CROISSANTS}\n\nOn Tue, 5 Mar 2024, Gwendolyn Okafor wrote:\n> {LIGHTHOUSE}\n",
                    JUNE_2019, reply=True))
    box.close()
    maildir = mailbox.Maildir(str(folder / "Maildir"))
    maildir.add(message("Beaver dams", "Alice Marsh <alice@example.com>", BEAVERS))
    (folder / "survey.eml").write_bytes(bytes(message("Glacier survey", "Ivan Petrov <ivan@example.com>", GLACIER)))
    return folder


def documents(idx: Index) -> dict[str, object]:
    return {f.path: f for f in idx.status(files=True).files}


def test_each_message_is_a_document_titled_by_its_subject(mail: Path, tmp_path: Path) -> None:
    with Index(tmp_path / "index", config=IndexConfig(workers=0)) as idx:
        report = idx.add([mail])
        assert not report.issues
        listed = documents(idx)
        (key,) = mailbox.Maildir(str(mail / "Maildir")).keys()
        titles = {path: f.title for path, f in listed.items()}
        assert titles == {
            str(mail / "box.mbox" / "1"): "Harbour lighthouse",
            str(mail / "box.mbox" / "1" / "report.pdf"): docgen.EXPECTED["pdf"][1],
            str(mail / "box.mbox" / "2"): "Café fair",  # RFC 2047 decoded
            str(mail / "Maildir" / key): "Beaver dams",  # the Maildir's own files are not loose documents
            str(mail / "survey.eml"): "Glacier survey",
        }
        assert {listed[str(mail / "box.mbox" / "2")].kind, listed[str(mail / "survey.eml")].kind} == {"email"}
        # a second run finds every message as it was
        again = idx.add([mail])
        assert (again.documents, again.unchanged) == (0, 5)


def test_a_senders_name_finds_their_messages(mail: Path, tmp_path: Path) -> None:
    with Index(tmp_path / "index", config=IndexConfig(workers=0)) as idx:
        idx.add([mail])
        found = [r.path for r in idx.search("Gwendolyn Okafor", k=5, mode=Mode.LEXICAL).results]
        assert found == [str(mail / "box.mbox" / "1")]  # the reply names her only in the quote it leaves out
        assert [r.path for r in idx.search("Alice Marsh", k=5, mode=Mode.LEXICAL).results] == [
            str(mail / "Maildir" / mailbox.Maildir(str(mail / "Maildir")).keys()[0])]
        # recipients are text too
        assert len(idx.search("Ivo Brandt", k=10, mode=Mode.LEXICAL).results) == 4


def test_an_attached_pdf_is_a_result_of_its_own(mail: Path, tmp_path: Path) -> None:
    sentence, _ = docgen.EXPECTED["pdf"]
    with Index(tmp_path / "index", config=IndexConfig(workers=0)) as idx:
        idx.add([mail])
        top = idx.search(sentence, k=3, mode=Mode.LEXICAL).results[0]
        assert top.path == str(mail / "box.mbox" / "1" / "report.pdf") and top.page == 1


def test_an_attached_image_is_left_out_though_tesseract_reads_images(tmp_path: Path) -> None:
    from engine.ingest.readers.message import attachments

    msg = message("Harbour lighthouse", "Gwendolyn Okafor <gwen@example.com>", LIGHTHOUSE,
                  pdf=docgen.make_pdf(tmp_path).read_bytes())
    msg.add_attachment(docgen.make_scan_png(tmp_path).read_bytes(), maintype="image", subtype="png",
                       filename="logo.png")
    assert [name for name, _ in attachments(msg)] == ["report.pdf"]  # a logo on every message: decision 0043


def test_quoted_lines_of_a_reply_are_not_indexed_twice(mail: Path, tmp_path: Path) -> None:
    with Index(tmp_path / "index", config=IndexConfig(workers=0)) as idx:
        idx.add([mail])
        assert [r.path for r in idx.search("lighthouse budget", k=5, mode=Mode.LEXICAL).results] == [
            str(mail / "box.mbox" / "1")]
        assert idx.search("croissants", k=1, mode=Mode.LEXICAL).results[0].path == str(mail / "box.mbox" / "2")


def test_the_date_filter_goes_by_when_a_message_was_sent(mail: Path, tmp_path: Path) -> None:
    with Index(tmp_path / "index", config=IndexConfig(workers=0)) as idx:
        idx.add([mail])
        before_2020 = Filters(modified_before=1_577_836_800.0)  # 2020-01-01
        assert [r.path for r in idx.search("croissants fair", k=5, within=before_2020).results] == [
            str(mail / "box.mbox" / "2")]
        assert not idx.search("lighthouse", k=5, within=before_2020, mode=Mode.LEXICAL).results


def test_a_file_that_starts_as_an_mbox_is_one_without_its_extension(tmp_path: Path) -> None:
    folder = tmp_path / "mail"
    folder.mkdir()
    box = mailbox.mbox(str(folder / "Inbox"))
    for n in range(6):
        box.add(message(f"Minutes {n}", "Gwendolyn Okafor <gwen@example.com>", f"{BEAVERS} Meeting {n}."))
    box.close()
    with Index(tmp_path / "index", config=IndexConfig(workers=0)) as idx:
        idx.add([folder])
        titles = sorted(f.title for f in documents(idx).values())
        assert titles == [f"Minutes {n}" for n in range(6)]


def hostile_mbox(folder: Path, pdf: bytes) -> Path:
    """A good message, then one with no header at all, one in a charset nobody has, one with an undecodable
    subject, and one with an attachment past the unpacked limit, written by hand as hostile mail is."""
    good = bytes(message("Harbour lighthouse", "Gwendolyn Okafor <gwen@example.com>", LIGHTHOUSE))
    huge = bytes(message("Quarterly figures", "Bob Lindqvist <bob@example.com>", CROISSANTS, pdf=pdf * 80))
    raw = (b"From gwen@example.com Tue Mar  5 10:00:00 2024\n" + good + b"\n"
           b"From nobody Tue Mar  5 10:00:00 2024\n\x00\x01\x02 no header here \xff\xfe\n\n"
           b"From bob@example.com Tue Mar  5 10:00:00 2024\n"
           b"From: Bob <bob@example.com>\nSubject: Charset\nContent-Type: text/plain; charset=x-no-such-charset\n\n"
           b"Caf\xe9 cr\xe8me for the glacier survey team.\n\n"
           b"From eve@example.com Tue Mar  5 10:00:00 2024\n"
           b"From: =?x-bogus?q?Ev=E9?= <eve@example.com>\nSubject: =?x-bogus?q?Beav=E9rs?=\nDate: not a date\n\n"
           b"Beavers build dams across slow streams.\n\n"
           b"From bob@example.com Tue Mar  5 10:00:00 2024\n" + huge + b"\n")
    path = folder / "hostile.mbox"
    path.write_bytes(raw)
    return path


def test_hostile_mail_is_recorded_and_the_rest_indexes(tmp_path: Path) -> None:
    folder = tmp_path / "mail"
    folder.mkdir()
    box = hostile_mbox(folder, docgen.make_pdf(tmp_path).read_bytes())
    limits = Limits(max_unpacked_bytes=200_000)
    with Index(tmp_path / "index", config=IndexConfig(workers=0, limits=limits)) as idx:
        report = idx.add([folder])
        issues = {issue.path: (issue.status, issue.reason) for issue in report.issues}
        assert issues[str(box / "2")] == (FileState.FAILED, "corrupt e-mail message: no message header found")
        assert issues[str(box / "3")][0] == FileState.INDEXED and "charset" in issues[str(box / "3")][1]
        assert issues[str(box / "4")][0] == FileState.INDEXED and "could not be decoded" in issues[str(box / "4")][1]
        assert "Date header" in issues[str(box / "4")][1]
        assert issues[str(box / "5" / "report.pdf")][0] == FileState.SKIPPED, issues
        assert "attachment unpacks to more than 0.2 MB" in issues[str(box / "5" / "report.pdf")][1]
        indexed = {f.path for f in documents(idx).values() if f.status == FileState.INDEXED}
        assert indexed == {str(box / n) for n in ("1", "3", "4", "5")}
        assert idx.search("lighthouse budget", k=1, mode=Mode.LEXICAL).results[0].path == str(box / "1")
        assert idx.search("glacier survey team", k=1, mode=Mode.LEXICAL).results[0].path == str(box / "3")


def test_a_result_card_shows_the_sender_and_date(mail: Path, tmp_path: Path) -> None:
    with Index(tmp_path / "index", config=IndexConfig(workers=0)) as idx:
        idx.add([mail])
        top = idx.search("lighthouse budget", k=1, mode=Mode.LEXICAL).results[0]
        # the date in local time, as a mail client shows it: the 5th of March in any zone but the far Pacific
        assert top.byline.startswith("Gwendolyn Okafor · 2024-03-0")
        assert idx.search(docgen.EXPECTED["pdf"][0], k=1, mode=Mode.LEXICAL).results[0].byline == ""


def test_an_index_of_schema_6_gets_the_byline_column(mail: Path, tmp_path: Path) -> None:
    with Index(tmp_path / "index", config=IndexConfig(workers=0)) as idx:
        idx.add([mail / "survey.eml"])
        with idx.store.db.atomic():
            idx.store.db.execute("ALTER TABLE documents DROP COLUMN byline")
            idx.store.meta.put(Key.SCHEMA_VERSION, 6)
    with Index(tmp_path / "index", create=False, config=IndexConfig(workers=0)) as idx:
        assert idx.search("glacier", k=1, mode=Mode.LEXICAL).results[0].byline == ""  # indexed before: none
        idx.add([mail])
        assert idx.search("glacier", k=1, mode=Mode.LEXICAL).results[0].title == "Glacier survey"
