#!/usr/bin/env bash
# Install what the browser tests need: Debian's Chromium (Playwright's own browser download
# cannot work here), the playwright driver package, JupyterLab, Notebook 7 and nbclient (quickstart test).
# Usage: bash tests/browser/setup.sh [python]   (default: python3 on PATH)
set -euo pipefail
PY="${1:-python3}"
if [ ! -x /usr/bin/chromium ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq chromium >/dev/null
fi
"$PY" -m pip install -q "playwright>=1.40" "jupyterlab>=4" "notebook>=7" "nbclient>=0.9" "nbformat>=5" "ipykernel>=6"
/usr/bin/chromium --version
"$PY" -c "import playwright, jupyterlab, nbclient; print('browser test tools ready')"
