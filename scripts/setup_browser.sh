#!/bin/sh
# Install the headless browser that tests/test_html_report.py screenshots the report with.
#
# Idempotent: does nothing when chromium is already on PATH. As root with apt-get (Debian,
# Ubuntu images, GitHub's ubuntu runners under sudo), installs the `chromium` package.
# Otherwise prints how to install it and exits 0: the browser test then skips with that
# reason (set INDEXCHECK_REQUIRE_BROWSER=1 to make it fail instead, e.g. in CI).
# An apt-get run that fails exits non-zero: a CI that asked for the browser should stop.
set -eu

for name in chromium chromium-browser; do
    if command -v "$name" >/dev/null 2>&1; then
        echo "setup_browser: $name is installed ($(command -v "$name"))"
        exit 0
    fi
done

if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup_browser: installing chromium with apt-get"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    apt-get install -y -q chromium
    command -v chromium >/dev/null 2>&1 || {
        echo "setup_browser: apt-get finished but chromium is not on PATH" >&2
        exit 1
    }
    echo "setup_browser: chromium installed ($(command -v chromium))"
    exit 0
fi

cat <<'HOW'
setup_browser: chromium is not installed, and this script installs it only as root with
apt-get. The report screenshot test will be skipped. To run it, install Chromium:
  Debian/Ubuntu:  sudo apt-get update && sudo apt-get install -y chromium
  Fedora:         sudo dnf install -y chromium
  macOS:          brew install --cask chromium   (then put `chromium` on PATH)
HOW
exit 0
