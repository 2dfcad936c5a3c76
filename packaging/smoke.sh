#!/usr/bin/env bash
# Smoke-test a built bundle headless and offline: index sample documents of every format through the real window
# (--selftest), check that each query finds its document, then time start-up to the first painted window.
#
#   packaging/smoke.sh [path/to/quire-app]      # default dist/quire/quire-app, built by packaging/build.sh
#
# Python is used only to write the sample documents (build/venv from build.sh, or $PYTHON with quire installed);
# the bundle itself runs without it. Without a network namespace (unshare) the checks run with the network present.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
APP="$(realpath "${1:-$ROOT/dist/quire/quire-app}")"
BUNDLE="$(dirname "$APP")"
PYTHON="${PYTHON:-$ROOT/build/venv/bin/python}"
# Start-up is timed this many times; the first run may read the bundle from a cold disk cache.
STARTS=3

fail() { echo "smoke: FAIL: $*" >&2; exit 1; }
since() { local ms=$(( ($(date +%s%N) - $1) / 1000000 )); printf '%d.%02d' $((ms / 1000)) $((ms % 1000 / 10)); }
[[ -x "$APP" ]] || fail "$APP is not an executable; run packaging/build.sh first"

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
"$PYTHON" "$ROOT/packaging/samples.py" "$WORK/docs"

# A fresh home: the app's settings and data folders land here, not in the user's, and can be checked.
export HOME="$WORK/home" QT_QPA_PLATFORM=offscreen
unset XDG_DATA_HOME XDG_CONFIG_HOME XDG_CACHE_HOME
mkdir -p "$HOME"
OFFLINE=()
if unshare -rn true 2>/dev/null; then
    OFFLINE=(unshare -rn)  # a new network namespace: no interface but a down loopback, so no connection can succeed
    echo "smoke: running offline (unshare -rn)"
fi
touch "$WORK/stamp"

[[ -f "$BUNDLE/_internal/resources/static/model.npz" ]] || fail "the static model is not in the bundle"
if find "$BUNDLE" -ipath '*torch*' -o -ipath '*transformers*' | grep -q .; then
    fail "torch or transformers is in the bundle"
fi

# query | file expected on top: paraphrases, not copies, of sentences written by tests/docgen.py
CASES=(
    "tidal turbines in an estuary that power hundreds of houses|tides.pdf"
    "apples harvested from the orchard in a dry summer|orchard.docx"
    "a ship sailing from Lisbon with cork and olive oil|marigold.epub"
)
for case in "${CASES[@]}"; do
    query="${case%|*}" expected="${case#*|}"
    start=$(date +%s%N)
    out="$("${OFFLINE[@]}" "$APP" --selftest "$WORK/docs" --query "$query" 2>"$WORK/stderr")" \
        || fail "--selftest exited $? for '$query': $(tail -5 "$WORK/stderr")"
    seconds=$(since "$start")
    top="$(sed -n 's/^top result: //p' <<<"$out")"
    [[ "$(basename "$top")" == "$expected" ]] || fail "'$query' found '$top', expected $expected"$'\n'"$out"
    printf 'smoke: ok  %-62s -> %-14s (%s s to index %s files, search and exit)\n' \
        "$query" "$expected" "$seconds" "$(find "$WORK/docs" -type f | wc -l)"
done

stamp() { while read -r line; do echo "$(since "$1") $line"; done; }  # prefix each line with seconds since $1
for run in $(seq "$STARTS"); do
    start=$(date +%s%N)
    line="$("${OFFLINE[@]}" "$APP" --startup-probe --index "$WORK/index" | stamp "$start" | grep ' ready ' || true)"
    exited=$(since "$start")
    read -r shown _ ready <<<"$line"
    [[ -n "${ready:-}" ]] || fail "the window never came up"
    # The probe closes the window as soon as it is painted; closing waits for the engine still loading behind it.
    printf 'smoke: start %d: window painted %s s after launch (%s s after main() began); exited after %s s\n' \
        "$run" "$shown" "$ready" "$exited"
done

# The offscreen platform skips the display code that a double-click uses; with Xvfb, start on a real X server too.
# grep reads the probe's output to the end (no -q): quitting at the first match closed the pipe under the app's next
# line, which once hung this step behind an error box (issue 33, item 11).
if command -v xvfb-run >/dev/null; then
    xvfb-run -a -s "-screen 0 1280x800x24" env QT_QPA_PLATFORM=xcb \
        "$APP" --startup-probe --index "$WORK/index" | grep '^ready ' >/dev/null || fail "the window did not come up on X11"
    echo "smoke: ok  the window comes up on an X server (xcb)"
fi

written="$(find "$BUNDLE" -newer "$WORK/stamp" | head -5)"
[[ -z "$written" ]] || fail "the app wrote into its own bundle: $written"
stray="$(find "$HOME" -type f -newer "$WORK/stamp" | grep -v -e "^$HOME/.config/quire/" -e "^$HOME/.local/share/quire/" || true)"
[[ -z "$stray" ]] || fail "the app wrote outside its settings and data folders: $stray"
echo "smoke: bundle $(du -sh "$BUNDLE" | cut -f1) at $BUNDLE: all checks passed"
