"""Plain text, Markdown, reStructuredText and source code.

Text files carry no declaration of their encoding, so decoding is the hard part: a UTF-8 file is recognised with
certainty, a byte-order mark settles UTF-16 and UTF-32, and anything else is charset_normalizer's best guess,
accepted only if the result looks like text. The same test decides whether a file with an unknown extension is
text at all (see :func:`looks_binary`), which is how source code and extension-less files get indexed.
"""

from __future__ import annotations

import codecs
import logging
import re
import unicodedata
from pathlib import Path

import charset_normalizer

from engine.errors import ReadError
from engine.ingest.readers.base import Block, Document, Limits, register
from engine.ingest.readers.guard import parser_errors

log = logging.getLogger(__name__)

# UTF-32 LE's mark starts with UTF-16 LE's, so it must be tried first.
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
# Control characters that real text contains; any other one is a sign of a wrong guess or of binary data.
_TEXT_CONTROLS = frozenset("\t\n\r\f\v\x1b")
_MAX_CONTROL_SHARE = 0.01
_CREDIBILITY_SAMPLE = 65_536
_PARAGRAPH_BREAK = re.compile(r"\n(?:[ \t]*\n)+")
_TITLE_MAX_CHARS = 100


def _credible(text: str) -> bool:
    sample = text[:_CREDIBILITY_SAMPLE]
    controls = sum(1 for ch in sample if ch not in _TEXT_CONTROLS and unicodedata.category(ch) == "Cc")
    return controls <= _MAX_CONTROL_SHARE * len(sample)


def decode(data: bytes, declared: str | None = None) -> str:
    """Decode a text file's bytes: byte-order mark, then ``declared`` (an HTML charset), UTF-8, then a guess."""
    for bom, codec in _BOMS:
        if data.startswith(bom):
            try:
                return data.decode(codec)
            except UnicodeDecodeError:
                break  # a damaged file with a mark; let the guess below have a go
    else:
        # NUL bytes never occur in 8-bit or UTF-8 text, and UTF-16 without a mark is too rare to guess at.
        if b"\x00" in data:
            raise ReadError("binary file", status="skipped")
    for codec in (declared, "utf-8"):
        if codec:
            try:
                return data.decode(codec)
            except (UnicodeDecodeError, LookupError):
                continue
    match = charset_normalizer.from_bytes(data).best()
    text = str(match) if match is not None else None
    if text is None or not _credible(text):
        raise ReadError("unknown text encoding")
    log.debug("decoded as %s", match.encoding)
    return text


def looks_binary(head: bytes) -> bool:
    """Whether the first bytes of a file of unknown type are not text (NULs, or no credible decoding)."""
    if any(head.startswith(bom) for bom, _ in _BOMS):
        return False
    if b"\x00" in head:
        return True
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


def short_title(line: str | None, path: Path) -> str:
    """A line short enough to be a title, or the file's stem."""
    line = (line or "").strip()
    return line if 0 < len(line) <= _TITLE_MAX_CHARS else path.stem


class TextReader:
    """Plain text and source code: paragraphs as they are, the first line as title if it is short."""

    name = "text"
    label = "text file"
    extensions = tuple(
        ".txt .text .log .csv .tsv .py .pyi .js .mjs .jsx .ts .tsx .java .kt .scala .c .h .cc .cpp .cxx .hpp .cs"
        " .go .rs .rb .php .pl .lua .r .swift .sh .bash .zsh .ps1 .bat .json .jsonl .yaml .yml .toml .ini .cfg"
        " .conf .xml .sql .css .scss .tex .bib .srt .vtt .properties .diff .patch .proto .el .hs .ml .ex .exs .erl"
        " .dart .jl".split()
    )

    def read(self, path: Path, limits: Limits) -> Document:
        with parser_errors(self.label):
            # Line ends are normalised so that paragraph breaks look the same whatever system wrote the file.
            text = decode(path.read_bytes()).replace("\r\n", "\n").replace("\r", "\n")
            title, text = self.markup(text)
            blocks = tuple(Block(part) for part in paragraphs(text))
        first = next((line for line in text.splitlines() if line.strip()), None)
        return Document(title=title or short_title(first, path), blocks=blocks, kind=self.name)

    def markup(self, text: str) -> tuple[str | None, str]:
        """The title the markup declares (None if it declares none) and the text with its markup removed."""
        return None, text


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


PLAIN = register(TextReader())
register(MarkdownReader())
register(RstReader())
