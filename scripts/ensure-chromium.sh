#!/usr/bin/env bash
# Install Debian's Chromium for the report's headless-browser test (tests/test_report_browser.py).
# Playwright drives it through its executable path; Playwright's own browser download is never used
# (the build machines reach only the package registries).
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then exit 0; fi
if [ "$(id -u)" != "0" ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "chromium not found and cannot apt-get install it here; the browser test will be skipped" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq chromium >/dev/null
