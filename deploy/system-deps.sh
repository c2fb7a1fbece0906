#!/usr/bin/env bash
# Installs the system packages the local stack and its checks need, only those missing:
# Python 3.11+ with venv, Java 17+, Maven, redis-server (with redis-cli), kcat, and Chromium
# (Debian's, for the web client's browser tests: Playwright drives it, never downloads one).
# Uses apt-get (as root, or through sudo); elsewhere it names what to install and fails.
set -euo pipefail

PYTHON="${PYTHON:-python3}"
missing=()

have() { command -v "$1" >/dev/null 2>&1; }

if ! have "$PYTHON" || ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    missing+=(python3)
fi
if have "$PYTHON" && ! "$PYTHON" -c 'import ensurepip, venv' 2>/dev/null; then
    missing+=(python3-venv)
fi
if ! have java || ! java -version 2>&1 | grep -Eq 'version "(1[7-9]|[2-9][0-9])'; then
    missing+=(openjdk-17-jre-headless)
fi
have mvn || missing+=(maven)
have redis-server || missing+=(redis-server)
have redis-cli || missing+=(redis-tools)
have kcat || missing+=(kcat)
have chromium || [ -x /usr/bin/chromium ] || missing+=(chromium)

if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi

echo "setup: installing system packages: ${missing[*]}"
if ! have apt-get; then
    echo "setup: no apt-get here; please install: ${missing[*]} (Java 17+, Maven, Redis 7, kcat, Chromium, Python 3.11+)" >&2
    exit 1
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then
    if have sudo; then SUDO="sudo"; else
        echo "setup: not root and no sudo; please install: ${missing[*]}" >&2
        exit 1
    fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
