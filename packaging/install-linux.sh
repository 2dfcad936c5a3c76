#!/usr/bin/env bash
# Put quire into the user's application menu (no root needed), or take it out again.
#
#   install-linux.sh                  # inside an unpacked bundle (quire/install-linux.sh): install that bundle
#   install-linux.sh dist/quire       # install a built bundle
#   install-linux.sh --pip            # menu entry for the quire-app already on PATH (pip install)
#   install-linux.sh --uninstall      # remove the menu entry, icons and installed bundle; indexes are kept
#
# A bundle is copied to ~/.local/opt/quire and linked as ~/.local/bin/quire-app; the menu entry goes to
# $XDG_DATA_HOME/applications and the icons to $XDG_DATA_HOME/icons/hicolor (XDG_DATA_HOME: ~/.local/share).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
DATA="${XDG_DATA_HOME:-$HOME/.local/share}"
OPT="$HOME/.local/opt/quire"
BIN="$HOME/.local/bin"
DESKTOP="$DATA/applications/quire.desktop"
HICOLOR="$DATA/icons/hicolor"
# hicolor folder <- file in resources/icons
ICONS=("scalable/apps/quire.svg:quire.svg" "256x256/apps/quire.png:quire-256.png" "64x64/apps/quire.png:quire-64.png")

fail() { echo "install-linux: $*" >&2; exit 1; }

refresh_caches() {  # menus and icon themes pick up changes without these, only later; absent tools are fine
    command -v update-desktop-database >/dev/null && update-desktop-database -q "$DATA/applications" || true
    command -v gtk-update-icon-cache >/dev/null && gtk-update-icon-cache -q -t "$HICOLOR" 2>/dev/null || true
}

uninstall() {
    rm -f "$DESKTOP"
    for icon in "${ICONS[@]}"; do rm -f "$HICOLOR/${icon%%:*}"; done
    [[ -L "$BIN/quire-app" ]] && rm -f "$BIN/quire-app"
    rm -rf "$OPT"
    refresh_caches
    echo "quire removed from the menu; indexes in ${DATA}/quire are kept"
}

# install EXEC RESOURCES: the menu entry runs EXEC; the .desktop file and icons come from RESOURCES
install_entry() {
    local exec="$1" resources="$2"
    [[ -f "$resources/quire.desktop" ]] || fail "no quire.desktop in $resources"
    mkdir -p "$(dirname "$DESKTOP")"
    # Exec gets the absolute path: menus do not see the PATH that a login shell sets up
    sed "s|^Exec=.*|Exec=\"$exec\"|" "$resources/quire.desktop" >"$DESKTOP"
    for icon in "${ICONS[@]}"; do
        install -D -m 644 "$resources/icons/${icon#*:}" "$HICOLOR/${icon%%:*}"
    done
    refresh_caches
    echo "quire is in the application menu (runs $exec)"
}

install_bundle() {
    local bundle
    bundle="$(cd "$1" && pwd)"
    [[ -x "$bundle/quire-app" ]] || fail "$bundle has no quire-app: pass the bundle folder (dist/quire)"
    if [[ "$bundle" != "$OPT" ]]; then
        rm -rf "$OPT"
        mkdir -p "$(dirname "$OPT")"
        cp -a "$bundle" "$OPT"
    fi
    mkdir -p "$BIN"
    ln -sfn "$OPT/quire-app" "$BIN/quire-app"
    install_entry "$OPT/quire-app" "$OPT/_internal/resources"
}

case "${1:-}" in
    --uninstall) uninstall ;;
    --pip)
        exec_path="$(command -v quire-app)" || fail "quire-app is not on PATH: pip install 'quire[app]' first"
        install_entry "$exec_path" "$(cd "$HERE/.." && pwd)/resources"
        ;;
    -h | --help) sed -n '2,10s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" ;;
    "") install_bundle "$HERE" ;;
    *) install_bundle "$1" ;;
esac
