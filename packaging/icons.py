"""Windows ``.ico`` and macOS ``.icns`` app icons, wrapped around the 256 px PNG in resources/icons.

Both formats may carry a PNG as it is (Windows Vista+, macOS 10.5+), so no image library is needed at build time
and the icon cannot drift from the one the window shows.
"""

from __future__ import annotations

import struct
from pathlib import Path

# The PNG must be this size: an .ico entry's width byte 0 means 256, and the icns type ic08 is 256x256.
ICON_PX = 256
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _png_size(data: bytes) -> tuple[int, int]:
    if not data.startswith(PNG_MAGIC):
        raise ValueError("not a PNG file")
    return struct.unpack(">II", data[16:24])  # IHDR width and height


def _checked_png(png: Path) -> bytes:
    data = png.read_bytes()
    if _png_size(data) != (ICON_PX, ICON_PX):
        raise ValueError(f"{png} is {_png_size(data)}, an app icon needs {ICON_PX}x{ICON_PX} px")
    return data


def write_ico(png: Path, out: Path) -> Path:
    """A one-image ``.ico``: ICONDIR (type 1 = icon) and one ICONDIRENTRY pointing at the PNG right after them."""
    data = _checked_png(png)
    header = struct.pack("<HHH", 0, 1, 1)
    entry = struct.pack("<BBBBHHII", 0, 0, 0, 0, 1, 32, len(data), len(header) + 16)
    out.write_bytes(header + entry + data)
    return out


def write_icns(png: Path, out: Path) -> Path:
    """A one-image ``.icns``: the file header, then one ``ic08`` (256x256 PNG) element, lengths including headers."""
    data = _checked_png(png)
    element = b"ic08" + struct.pack(">I", 8 + len(data)) + data
    out.write_bytes(b"icns" + struct.pack(">I", 8 + len(element)) + element)
    return out
