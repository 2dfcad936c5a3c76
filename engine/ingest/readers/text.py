"""Plain text, Markdown, reStructuredText and source code.

Text files carry no declaration of their encoding, so decoding is the hard part: a UTF-8 file is recognised with
certainty, a byte-order mark settles UTF-16 and UTF-32, and so does a NUL in every other byte (UTF-16 without a
mark). Other bytes are read as Windows-1252, the Western code page Latin-1 files fit too, unless they clearly say
otherwise; only then is charset_normalizer's best guess taken, and only if the result looks like text. The same
test decides whether a file with an unknown extension is text at all (see :func:`looks_binary`), which is how
source code and extension-less files get indexed.
"""

from __future__ import annotations

import codecs
import csv
import logging
import re
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from engine.errors import ReadError
from engine.filestate import FileState
from engine.ingest.readers.base import Block, Document, Limits, register
from engine.ingest.readers.clean import drop_modeline
from engine.ingest.readers.guard import parser_errors
from engine.text.sentences import MESSAGE_FIELDS, split_spans

if TYPE_CHECKING:
    from charset_normalizer import CharsetMatch

log = logging.getLogger(__name__)

# UTF-32 LE's mark starts with UTF-16 LE's, so it must be tried first.
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
# Control characters that real text contains; any other one, like an unassigned, private-use or surrogate code
# point, is a sign of a wrong guess or of binary data.
_TEXT_CONTROLS = frozenset("\t\n\r\f\v\x1b")
_NOT_TEXT = frozenset(("Cc", "Cn", "Co", "Cs"))
_MAX_CONTROL_SHARE = 0.01
_CREDIBILITY_SAMPLE = 65_536
# UTF-16 without a mark: the high byte of every ASCII character is NUL, so one of the two byte positions is NUL in
# at least this share of pairs (all of them in English, the spaces and punctuation in Cyrillic or Greek) and the
# other almost never; binary data that happens to look like that fails the credibility test.
_UTF16_NUL_SHARE = 0.1
_UTF16_OTHER_NUL_SHARE = 0.01
# The guesser cannot tell the 8-bit code pages apart on a few words: it dropped Windows-1252 from its candidates for
# "Ça va à côté" and picked Central European for "Café crème brûlée is a French dessert" (a tie). Below this size
# Windows-1252 is kept when it reads cleanly (_WESTERN_MARKS); above it, unless a candidate reads better.
_SHORT_GUESS_BYTES = 64
# Cyrillic, Greek or CJK bytes read as Windows-1252 give mostly accented letters; Western text has few.
_MAX_ACCENTED_LETTERS = 0.5
# Non-ASCII characters other than letters that Western text uses; Central European text read as Windows-1252 gives
# others ("by³em" for "byłem").
_WESTERN_MARKS = frozenset("‘’‚“”„–—…•€«»‹›°£¥§©®™¡¿·×÷±¢¶\xa0\xad")
_PARAGRAPH_BREAK = re.compile(r"\n(?:[ \t]*\n)+")
# The marks at the start of a quoted line of a saved e-mail ("> ", ">> "): read with them, a reply's sentences ran
# across its paragraphs ("... about £900. > The earliest fitting date ... > > P > >> On Tue, 4 Feb, Sam wrote:").
_QUOTE_MARKS = re.compile(r"^[ \t]*(?:>[ \t]?)+", re.MULTILINE)
# A line of a message's or memo's header: the field's name, and its value.
_HEADER_FIELD = re.compile(rf"({MESSAGE_FIELDS})\s*:\s*(.*)", re.IGNORECASE)
# The header fields whose value titles a message, memo or letter.
_SUBJECT_FIELDS = ("subject", "re")
_TITLE_MAX_CHARS = 100
# A letter's salutation on a line of its own ("Dear Ms Okafor,", "Dear Sir or Madam"): what is above it in a letter's
# first LETTER_HEAD_LINES lines is addresses and a date, no title.
_SALUTATION = re.compile(r"dear\b[^.!?]{0,60}", re.IGNORECASE)
LETTER_HEAD_LINES = 16
# Where a title is looked for (text_title): a message header and a first line fit many times over.
_TITLE_SCAN_CHARS = 8_192
_NOT_SPACE = re.compile(r"\S")


def _credible(text: str) -> bool:
    sample = text[:_CREDIBILITY_SAMPLE]
    controls = sum(1 for ch in sample if ch not in _TEXT_CONTROLS and unicodedata.category(ch) in _NOT_TEXT)
    return controls <= _MAX_CONTROL_SHARE * len(sample)


def decode(data: bytes, declared: str | None = None) -> str:
    """Decode a text file's bytes: byte-order mark, UTF-16 by its NULs, then ``declared`` (an HTML charset), UTF-8,
    Windows-1252, then a guess."""
    for bom, codec in _BOMS:
        if data.startswith(bom):
            try:
                return data.decode(codec)
            except UnicodeDecodeError:
                break  # a damaged file with a mark; let the guess below have a go
    else:
        # NUL bytes never occur in 8-bit or UTF-8 text: it is UTF-16 or not text at all
        if b"\x00" in data:
            text = _utf16(data, final=True)
            if text is None:
                raise ReadError("binary file", status=FileState.SKIPPED)
            return text
    for charset in (declared, "utf-8"):
        if charset:
            try:
                return data.decode(charset)
            except (UnicodeDecodeError, LookupError):
                continue
    # imported only for the few files that need a guess: most text is UTF-8 or Windows-1252, and a reader process
    # that reads a PDF never guesses (docs/decisions/0008-reader-pool-sizes.md)
    import charset_normalizer

    matches = charset_normalizer.from_bytes(data)
    best = matches.best()
    western = _western(data, best, next((m for m in matches if "cp1252" in m.could_be_from_charset), None))
    if western is not None:
        return western
    if best is None or not _credible(str(best)):  # str() decodes once; the match keeps the text
        raise ReadError("unknown text encoding")
    log.debug("decoded as %s", best.encoding)
    return str(best)


def _utf16(data: bytes, *, final: bool) -> str | None:
    """The text of UTF-16 without a byte-order mark, or None if the NULs are not where it puts them."""
    sample = data[: min(len(data), _CREDIBILITY_SAMPLE) // 2 * 2]
    pairs = len(sample) // 2
    even, odd = sample[0::2].count(0), sample[1::2].count(0)
    for nuls, other, codec in ((odd, even, "utf-16-le"), (even, odd, "utf-16-be")):
        if pairs and nuls >= _UTF16_NUL_SHARE * pairs and other <= _UTF16_OTHER_NUL_SHARE * pairs:
            try:
                # a head of the file may end inside a character: an incremental decoder accepts that
                text = codecs.getincrementaldecoder(codec)().decode(data, final=final)
            except UnicodeDecodeError:
                return None
            return text if _credible(text) else None
    return None


def _western(data: bytes, best: CharsetMatch | None, western: CharsetMatch | None) -> str | None:
    """The bytes as Windows-1252, unless they clearly say otherwise (``best`` is the guess, ``western`` the guesser's
    Windows-1252 candidate if it kept one)."""
    try:
        text = data.decode("cp1252")
    except UnicodeDecodeError:
        return None  # one of the five bytes Windows-1252 leaves undefined: another code page
    sample = text[:_CREDIBILITY_SAMPLE]
    letters = [ch for ch in sample if ch.isalpha()]
    if sum(not ch.isascii() for ch in letters) > _MAX_ACCENTED_LETTERS * len(letters):
        return None
    if western is None:
        short_and_clean = len(data) < _SHORT_GUESS_BYTES and all(
            ch.isascii() or ch.isalpha() or ch in _WESTERN_MARKS for ch in sample
        )
        return text if short_and_clean else None
    if best is not None and (best.chaos < western.chaos or best.coherence > western.coherence):
        return None  # another code page reads with less mess or as a more coherent language
    return text


def looks_binary(head: bytes) -> bool:
    """Whether the first bytes of a file of unknown type are not text (NULs, or no credible decoding)."""
    if any(head.startswith(bom) for bom, _ in _BOMS):
        return False
    if b"\x00" in head:
        return _utf16(head, final=False) is None
    try:
        # The head may end inside a multi-byte character: an incremental decoder accepts that.
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError:
        try:
            decode(head)
        except ReadError:
            return True
    return False


def paragraphs(text: str) -> list[str]:
    """Split at blank lines, keeping each paragraph's text as it is (indentation included)."""
    parts = (part.strip("\n") for part in _PARAGRAPH_BREAK.split(text))
    return [part for part in parts if part.strip()]


def short_title(line: str | None, path: Path, following: str | None = None) -> str:
    """A line short enough to be a title and not running text, or the file's stem: a note that begins "The night
    train to Vienna leaves at 22:10. Tickets are sold at the counter." was titled by its two sentences, which its
    card then showed again as the passage. ``following``: the next line, where it is in the same paragraph; a
    hard-wrapped paragraph's first line is running text cut mid-sentence ("These are the GNU core utilities.  This
    package is the union of"), which the next line carries on in lower case or after a comma."""
    line = (line or "").strip()
    running_text = line.endswith((".", "!", "?")) and len(split_spans(line)) > 1  # not "Chapter 1. Introduction"
    carried_on = following is not None and (following.lstrip()[:1].islower() or line.endswith(","))
    return line if 0 < len(line) <= _TITLE_MAX_CHARS and not running_text and not carried_on else path.stem


def letter_title(lines: Sequence[str], path: Path) -> str | None:
    """The title of a letter that opens with addresses and a date above its salutation (``lines``: its first lines
    or paragraphs): its subject line ("Re: ...", "Subject: ...") beside the salutation, else the file's stem. A new
    user's RTF letter was titled by its sender's street. None: ``lines`` are no such letter's opening."""
    head = [line.strip() for line in lines[:LETTER_HEAD_LINES] if line.strip()]
    at = next((i for i, line in enumerate(head) if _SALUTATION.fullmatch(line)), 0)
    if at == 0:  # no salutation, or one with nothing above it
        return None
    for line in head[max(0, at - 2) : at + 3]:
        field = _HEADER_FIELD.fullmatch(line)
        if field is not None and field.group(1).lower() in _SUBJECT_FIELDS:
            return short_title(field.group(2), path)
    return path.stem


def text_title(text: str, path: Path) -> str:
    """A plain text's title: the subject of the message or memo header it opens with ("To: ...", "Subject: ..."),
    that of a letter (:func:`letter_title`), else its first line where that is a title (:func:`short_title`). A new
    user's saved e-mail was titled by its "To:" line; a header without a subject gives the file's stem. Only the
    text's first TITLE_SCAN_CHARS from its first line are read: splitting a whole 48 MB log into lines for its first
    took 87 ms, this 0.1 ms."""
    first_char = _NOT_SPACE.search(text)
    if first_char is None:
        return short_title(None, path)
    start = text.rfind("\n", 0, first_char.start()) + 1
    lines = text[start : first_char.start() + _TITLE_SCAN_CHARS].splitlines()  # the first of them not blank
    header = []
    for line in lines:
        field = _HEADER_FIELD.fullmatch(line.strip())
        if field is None:
            break
        header.append(field)
    if header:
        subject = next((f.group(2) for f in header if f.group(1).lower() in _SUBJECT_FIELDS), None)
        return short_title(subject, path)
    letter = letter_title(lines, path)
    if letter is not None:
        return letter
    following = lines[1] if len(lines) > 1 and lines[1].strip() else None
    return short_title(lines[0], path, following)


class TextReader:
    """Plain text and source code: paragraphs as they are, the first line as title if it is short."""

    name = "text"
    label = "text file"
    isolate = False  # our own code in Python (charset_normalizer looks at a sample): the time budget stops it
    extensions = tuple(
        ".txt .text .log .py .pyi .js .mjs .jsx .ts .tsx .java .kt .scala .c .h .cc .cpp .cxx .hpp .cs"
        " .go .rs .rb .php .pl .lua .r .swift .sh .bash .zsh .ps1 .bat .json .jsonl .yaml .yml .toml .ini .cfg"
        " .conf .xml .sql .css .scss .tex .bib .srt .vtt .properties .diff .patch .proto .el .hs .ml .ex .exs .erl"
        " .dart .jl".split()
    )

    def read(self, path: Path, limits: Limits) -> Document:
        """The file decoded (its encoding detected), a block per paragraph."""
        with parser_errors(self.label):
            # Line ends are normalised so that paragraph breaks look the same whatever system wrote the file.
            text = decode(path.read_bytes()).replace("\r\n", "\n").replace("\r", "\n")
            text = drop_modeline(text)  # an editor's settings, not the title
            title, text = self.markup(text)
            blocks = tuple(Block(part) for part in paragraphs(text))
        return Document(title=title or self.title_of(text, path), blocks=blocks, kind=self.name)

    def markup(self, text: str) -> tuple[str | None, str]:
        """The title the markup declares (None if it declares none) and the text with its markup removed: in plain
        text, the quote marks a saved e-mail's replies carry (a line of them alone is a paragraph break)."""
        return None, _QUOTE_MARKS.sub("", text)

    def title_of(self, text: str, path: Path) -> str:
        """The title of a text whose markup declares none (:func:`text_title`)."""
        return text_title(text, path)


# Inline markup shared by Markdown and reStructuredText. Underscores count only outside words (snake_case stays).
_STRONG = re.compile(r"(\*\*|(?<!\w)__)(?=\S)(.+?)(?<=\S)\1")
_EMPHASIS = re.compile(r"(\*|(?<!\w)_)(?=[^\s*_])(.+?)(?<=[^\s*_])\1(?!\w)")


def _plain_emphasis(line: str) -> str:
    return _EMPHASIS.sub(r"\2", _STRONG.sub(r"\2", line))


_MD_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_MD_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$")
# Horizontal rules and setext heading underlines.
_MD_RULE = re.compile(r"^\s{0,3}([-*_=])(?:\s*\1){2,}\s*$")
_MD_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_MD_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)|\[([^\]]+)\]\[[^\]]*\]")
_MD_LINK_DEFINITION = re.compile(r"^\s{0,3}\[[^\]]+\]:\s+\S")
_MD_AUTOLINK = re.compile(r"<((?:https?|ftp|mailto):[^>\s]+)>")
_MD_QUOTE = re.compile(r"^\s{0,3}>\s?")
_MD_CODE_SPAN = re.compile(r"`+([^`]+)`+")
_HTML_TAG = re.compile(r"<!--.*?-->|</?[A-Za-z][^>]*>")


class MarkdownReader(TextReader):
    """Markdown with its markup stripped lightly: what a reader sees, minus the punctuation that formats it."""

    name = "markdown"
    label = "Markdown"
    extensions = (".md", ".markdown", ".mdown", ".mkd")

    def markup(self, text: str) -> tuple[str | None, str]:
        """Markdown as plain text (code, links and emphasis unwrapped) and its first heading as the title."""
        title = None
        out: list[str] = []
        in_code = False
        for line in text.split("\n"):
            if _MD_FENCE.match(line):
                in_code = not in_code
                out.append("")
                continue
            if in_code:
                out.append(line)
                continue
            if _MD_LINK_DEFINITION.match(line) or _MD_RULE.match(line):
                out.append("")
                continue
            heading = _MD_HEADING.match(line)
            if heading:
                line = _inline_markdown(heading.group(2))
                if title is None and len(heading.group(1)) == 1:
                    title = line
                # A heading is a block of its own even without blank lines around it.
                out.extend(("", line, ""))
                continue
            out.append(_inline_markdown(_MD_QUOTE.sub("", line)))
        return title, "\n".join(out)


def _inline_markdown(line: str) -> str:
    line = _MD_IMAGE.sub("", line)
    line = _MD_LINK.sub(lambda m: m.group(1) or m.group(2) or "", line)
    line = _HTML_TAG.sub("", _MD_AUTOLINK.sub(r"\1", line))
    return _plain_emphasis(_MD_CODE_SPAN.sub(r"\1", line))


# Section adornment: a line of one repeated punctuation character.
_RST_ADORNMENT = re.compile(r"""^([=\-`:'"~^_*+#<>.])\1{2,}\s*$""")
# Directives (".. note::"), substitution definitions and hyperlink targets (".. _label:").
_RST_DIRECTIVE = re.compile(r"^\s*\.\.\s+(?:\|[^|]+\|\s+)?(?:[\w:-]+::|_[^:]*:)")
_RST_ROLE = re.compile(r":[\w:-]+:`([^`]*)`")
_RST_REFERENCE = re.compile(r"`([^`<]*?)\s*(?:<[^>]*>)?`__?")
_RST_LITERAL = re.compile(r"``([^`]+)``")


class RstReader(TextReader):
    """reStructuredText: the first underlined heading is the title; adornments and directive lines go."""

    name = "rst"
    label = "reStructuredText"
    extensions = (".rst", ".rest")

    def markup(self, text: str) -> tuple[str | None, str]:
        """reStructuredText as plain text (directives and markup removed) and its title."""
        lines = text.split("\n")
        title = None
        out: list[str] = []
        for i, line in enumerate(lines):
            if _RST_ADORNMENT.match(line) or _RST_DIRECTIVE.match(line):
                out.append("")
                continue
            underlined = i + 1 < len(lines) and bool(_RST_ADORNMENT.match(lines[i + 1]))
            line = _plain_emphasis(_RST_REFERENCE.sub(r"\1", _RST_ROLE.sub(r"\1", _RST_LITERAL.sub(r"\1", line))))
            if underlined and line.strip():
                title = title or line.strip()
                out.extend(("", line, ""))
            else:
                out.append(line)
        return title, "\n".join(out)


class TableReader(TextReader):
    """Comma- and tab-separated tables: each row a paragraph of its own, as written, and the file's name as the title.
    Read as running text, rows ran together into one passage ("Electricity and gas,158,direct debit increased -
    disputed Water,42, Broadband,32,...") and the header row ("category,monthly_amount_gbp,notes") titled a budget."""

    name = "table"
    label = "CSV or TSV table"
    extensions = (".csv", ".tsv")

    def markup(self, text: str) -> tuple[str | None, str]:
        """No title, and the rows apart, a block each (a quoted cell's line breaks stay in its row's block)."""
        return None, "\n\n".join(_rows(text))

    def title_of(self, text: str, path: Path) -> str:
        """The file's name: a table's first row names its columns."""
        return path.stem


def _rows(text: str) -> list[str]:
    """The rows of a table's text as written, blank ones left out: a row ends where the csv module ends a record, so
    a quoted cell's line breaks stay in its row and a quote inside a cell (27" screen) opens nothing."""
    lines = text.split("\n")
    rows: list[str] = []
    start = 0
    reader = csv.reader(lines)
    try:
        for _ in reader:
            rows.append("\n".join(lines[start : reader.line_num]))
            start = reader.line_num
    except csv.Error:  # a cell past the module's size limit: the rest a row a line
        rows += lines[start:]
    return [row for row in rows if row.strip()]


PLAIN = register(TextReader())
register(MarkdownReader())
register(RstReader())
register(TableReader())
