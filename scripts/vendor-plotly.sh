#!/usr/bin/env bash
# Refresh the plotly.js bundle the HTML reports inline (src/aifabric/report/vendor/): the "basic"
# partial bundle (scatter, bar, pie traces; about 1.2 MB) from the npm registry, at the plotly.js
# version the installed plotly Python package ships (its full bundle is 4.8 MB). Usage, from the
# repository root: bash scripts/vendor-plotly.sh [VERSION]
set -euo pipefail
PY=${PYTHON:-.venv/bin/python}
version=${1:-$("$PY" -c 'from plotly.offline import get_plotlyjs_version as v; print(v())')}
dest=src/aifabric/report/vendor
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "plotly.js-basic-dist-min@$version" >/dev/null && tar xzf ./*.tgz)
head -c 200 "$tmp/package/plotly-basic.min.js" | grep -q "plotly.js (basic - minified) v$version" \
  || { echo "the package's bundle is not plotly.js basic v$version" >&2; exit 1; }
cp "$tmp/package/plotly-basic.min.js" "$dest/plotly-basic.min.js"
cp "$tmp/package/LICENSE" "$dest/LICENSE.plotly.txt"
sha256sum "$dest/plotly-basic.min.js"
