#!/usr/bin/env bash
# Build the Linux one-folder bundle from a checkout: dist/quire/quire-app and dist/quire-VERSION-linux-ARCH.tar.gz.
#
#   packaging/build.sh            # PYTHON=python3.12 packaging/build.sh to build with another interpreter
#
# The build venv (build/venv, ignored by git) holds quire's plain dependencies and PyInstaller, never the GPU
# extras, so nothing heavy can slip into the bundle. Re-running reuses the venv; `rm -rf build dist` starts afresh.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
VENV="${QUIRE_BUILD_VENV:-$ROOT/build/venv}"
# Pinned so that a bundle built later is built the same way; PyInstaller's Qt hooks follow PySide6 releases.
PYINSTALLER="${PYINSTALLER:-pyinstaller==6.22.3}"

cd "$ROOT"
if [[ ! -f resources/static/model.npz ]]; then
    echo "build.sh: resources/static/model.npz is missing; the bundle needs the static model" >&2
    exit 1
fi

if [[ ! -x "$VENV/bin/python" ]]; then
    "$PYTHON" -m venv "$VENV"
fi
# Editable: the spec analyses this checkout itself (pathex), the install only brings the dependencies and metadata.
"$VENV/bin/python" -m pip install --quiet --editable "$ROOT[app]" "$PYINSTALLER"

"$VENV/bin/python" -m PyInstaller --noconfirm --clean --log-level WARN \
    --distpath "$ROOT/dist" --workpath "$ROOT/build/pyinstaller" packaging/quire.spec

# pyenv and other source builds of Python keep their debug symbols (about 18 MB); the interpreter runs the same
# without them. Only libpython: stripping the wheels' libraries can break those that auditwheel patched.
if command -v strip >/dev/null; then
    strip --strip-debug dist/quire/_internal/libpython3*.so*
fi
# The installer travels in the bundle, so an unpacked archive installs itself: quire/install-linux.sh
cp packaging/install-linux.sh dist/quire/

VERSION="$("$VENV/bin/python" -c 'from importlib.metadata import version; print(version("quire"))')"
ARCHIVE="dist/quire-$VERSION-linux-$(uname -m).tar.gz"
tar -czf "$ARCHIVE" -C dist quire
echo "bundle:  dist/quire/quire-app ($(du -sh dist/quire | cut -f1))"
echo "archive: $ARCHIVE ($(du -sh "$ARCHIVE" | cut -f1))"
