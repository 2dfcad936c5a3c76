r"""Rich Text Format, through a small tokenizer of its own that reads any file in one linear pass.

(striprtf, the usual library, runs a hyperlink regular expression over the whole file that takes cubic time on
unfinished fields: a 1 MB file of them would hold the indexer for good.) A stack of groups tells the document's text
from that of metadata, font tables, pictures and field codes, which is dropped; the document title is taken from
its ``{\info{\title ...}}`` group.

RTF is 7-bit text with escapes for everything else. The bytes are read as Latin-1 (one character per byte), and
runs of raw bytes and ``\'hh`` escapes are decoded with the code page in force: the font's ``\fcharset`` if it
declares one, else the document's ``\ansicpg``, else Windows-1252, the format's usual page.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, replace
from pathlib import Path

from engine.errors import ReadError
from engine.ingest.readers.base import Block, Document, Limits, register
from engine.ingest.readers.guard import parser_errors
from engine.ingest.readers.text import letter_title, short_title

# A control word with its optional number and the space that ends it, a hex escape, a control symbol, a brace,
# line ends (which RTF ignores), or a run of plain text; each is one match, so a file is one linear pass.
_TOKEN = re.compile(
    r"\\([a-zA-Z]{1,32})(-?\d{1,10})? ?|\\'([0-9a-fA-F]{2})|\\(.)|([{}])|[\r\n]+|([^\\{}\r\n]+)", re.DOTALL
)
# Groups whose text is not the document's: tables, metadata, pictures, objects, field codes, headers and footers,
# bookmarks. Any group marked ``{\*...}`` (an optional destination) is dropped too.
_DROPPED = frozenset(
    "fonttbl colortbl stylesheet info pict object objdata fldinst listtable listoverridetable revtbl rsidtbl"
    " generator xmlnstbl themedata colorschememapping latentstyles datastore filetbl pgdsctbl private"
    " header headerl headerr headerf footer footerl footerr footerf bkmkstart bkmkend nonshppict".split()
)
_TEXT = {
    "par": "\n", "sect": "\n", "page": "\n", "line": "\n", "row": "\n", "cell": "\n", "tab": "\t",
    "emdash": "\u2014", "endash": "\u2013", "emspace": " ", "enspace": " ", "qmspace": " ", "bullet": "\u2022",
    "lquote": "\u2018", "rquote": "\u2019", "ldblquote": "\u201c", "rdblquote": "\u201d",
}
_SYMBOLS = {"~": "\xa0", "_": "\u2011", "-": "", "\n": "\n", "\r": "\n", "{": "{", "}": "}", "\\": "\\"}
# \fcharset numbers of the code pages that still turn up; a charset not listed falls back to the document's page.
_CHARSETS = {
    77: "mac_roman", 128: "cp932", 129: "cp949", 134: "cp936", 136: "cp950", 161: "cp1253", 162: "cp1254",
    163: "cp1258", 177: "cp1255", 178: "cp1256", 186: "cp1257", 204: "cp1251", 222: "cp874", 238: "cp1250",
}
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class _Group:
    """What a ``{...}`` group inherits from the one around it."""

    destination: str | None = None  # "title", a dropped destination, or None for body text
    font: int | None = None
    skip_after_unicode: int = 1  # \ucN: fallback characters that follow each \uN


class _Converter:
    """One pass over an RTF document's tokens; ``body`` and ``title`` collect the text."""

    def __init__(self) -> None:
        self.body: list[str] = []
        self.title: list[str] = []
        self.raw = bytearray()  # bytes waiting to be decoded with the code page in force
        self.codepage = "cp1252"
        self.fonts: dict[int, str] = {}
        self.font_defined: int | None = None  # the font table entry being read
        self.skip = 0  # fallback characters of the last \uN still to drop

    def run(self, source: str) -> None:
        stack: list[_Group] = []
        group = _Group()
        pos, end = 0, len(source)
        while pos < end:
            match = _TOKEN.match(source, pos)
            if match is None:  # a backslash at the very end
                break
            pos = match.end()
            word, number, hex_, symbol, brace, text = match.groups()
            if self.skip and brace is None and match.lastindex is not None:
                # the fallback of the last \uN: a hex escape, control word or symbol counts as one character
                if text is None or len(text) <= self.skip:
                    self.skip -= 1 if text is None else len(text)
                    continue
                text, self.skip = text[self.skip :], 0
            if text is not None:
                self.raw += text.encode("latin-1")
            elif hex_ is not None:
                self.raw.append(int(hex_, 16))
            elif brace is not None:
                self._flush(group)
                self.skip = 0
                if brace == "{":
                    stack.append(group)
                elif len(stack) > 1:
                    group = stack.pop()
                else:
                    break  # the document's own group closed: what follows is not part of it
            elif word is not None:
                self._flush(group)
                if word == "bin" and number:  # binary data follows, as many bytes as the number says
                    pos += max(0, int(number))
                else:
                    group = self._control(group, word, int(number) if number else None)
            elif symbol is not None:
                self._flush(group)
                if symbol == "*":
                    group = replace(group, destination=group.destination or "*")
                elif symbol in _SYMBOLS:
                    self._emit(group, _SYMBOLS[symbol])
        self._flush(group)

    def _control(self, group: _Group, word: str, number: int | None) -> _Group:
        if word in _DROPPED:
            return replace(group, destination=word)
        if word == "title":
            return replace(group, destination=word if group.destination in (None, "info") else group.destination)
        if word == "u" and number is not None:
            self._emit(group, chr(number % 0x10000))  # a signed 16-bit UTF-16 unit
            self.skip = group.skip_after_unicode
        elif word == "uc" and number is not None:
            return replace(group, skip_after_unicode=max(0, number))
        elif word == "ansicpg" and number:
            self.codepage = _known(f"cp{number}") or self.codepage
        elif word == "f" and number is not None:
            if group.destination == "fonttbl":
                self.font_defined = number
            else:
                return replace(group, font=number)
        elif word == "fcharset" and number in _CHARSETS and self.font_defined is not None:
            self.fonts[self.font_defined] = _CHARSETS[number]
        elif word in _TEXT:
            self._emit(group, _TEXT[word])
        return group

    def _flush(self, group: _Group) -> None:
        if self.raw:
            codepage = self.fonts.get(group.font, self.codepage) if group.font is not None else self.codepage
            self._emit(group, self.raw.decode(codepage, "replace"))
            self.raw.clear()

    def _emit(self, group: _Group, text: str) -> None:
        if group.destination is None:
            self.body.append(text)
        elif group.destination == "title":
            self.title.append(text)


def _known(codec: str) -> str | None:
    try:
        codecs.lookup(codec)
    except LookupError:
        return None
    return codec


def _joined(parts: list[str]) -> str:
    text = "".join(parts)
    # \uN gives UTF-16 units: a pair of them is one character, and a lone one is replaced
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace") if _SURROGATE.search(text) else text


def rtf_text(data: bytes) -> tuple[str, str]:
    """The text of an RTF document (a line per paragraph, table cell or line break) and its title ("" if none)."""
    converter = _Converter()
    converter.run(data.decode("latin-1"))
    return _joined(converter.body), _joined(converter.title).strip()


class RtfReader:
    r"""RTF documents; every paragraph (\par) is a block."""

    name = "rtf"
    isolate = False  # a tokenizer of our own in one linear pass, in Python: the time budget stops it
    extensions = (".rtf",)

    def read(self, path: Path, limits: Limits) -> Document:
        """The document's text, a block per paragraph, in one linear pass over the file."""
        with parser_errors("RTF"):
            data = path.read_bytes()
            if not data.lstrip().startswith(b"{\\rtf"):
                raise ReadError("corrupt RTF: not an RTF file")
            text, title = rtf_text(data)
        texts = [line.strip() for line in text.splitlines() if line.strip()]
        return Document(
            title=title or letter_title(texts, path) or short_title(texts[0] if texts else None, path),
            blocks=tuple(Block(line) for line in texts),
            kind=self.name,
        )


register(RtfReader())
