# shellcheck shell=bash
# Shared set-up for scripts/quickstart and scripts/test: system packages (Debian/Ubuntu), then a venv.
# Sourced, not run. Idempotent: installs only what is missing.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${STACKBENCH_VENV:-$ROOT/.venv}"

_apt_updated=0
apt_install() {
    # apt_install PACKAGE... : install the Debian packages that are not installed yet.
    local missing=()
    for pkg in "$@"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    if ! command -v apt-get >/dev/null; then
        echo "Error: missing system packages: ${missing[*]}. Install them with your package manager and re-run." >&2
        exit 1
    fi
    local sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null; then sudo="sudo"; else
            echo "Error: missing system packages: ${missing[*]}. Run as root or install them: apt-get install ${missing[*]}." >&2
            exit 1
        fi
    fi
    echo "Installing system packages: ${missing[*]}" >&2
    if [ $_apt_updated -eq 0 ]; then $sudo apt-get update -qq; _apt_updated=1; fi
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}

find_python() {
    for candidate in python3.13 python3.12 python3.11 python3; do
        if command -v "$candidate" >/dev/null && "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
            echo "$candidate"; return 0
        fi
    done
    echo "Error: Python 3.11 or newer is required. Install it (Debian 12: apt-get install python3) and re-run." >&2
    exit 1
}

make_venv() {
    # make_venv EXTRAS : create the venv if needed and install stackbench with those extras.
    local extras="$1" py
    py="$(find_python)"
    if [ ! -x "$VENV/bin/python" ]; then
        if ! "$py" -m venv "$VENV" 2>/dev/null; then
            rm -rf "$VENV"
            apt_install python3-venv
            "$py" -m venv "$VENV"
        fi
    fi
    local stamp="$VENV/.stackbench-installed-$extras"
    if [ ! -f "$stamp" ] || [ "$ROOT/pyproject.toml" -nt "$stamp" ]; then
        "$VENV/bin/python" -m pip install -q --upgrade pip >/dev/null
        "$VENV/bin/python" -m pip install -q -e "$ROOT[$extras]"
        touch "$stamp"
    fi
}
