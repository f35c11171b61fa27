#!/usr/bin/env bash
# Renders `runner show --svg` pictures in headless Chromium (Debian's `chromium`) and checks each
# rendered: a PNG of the SVG's own size that is not blank. Not needed by CI (runner/tests/it/show.rs
# checks the SVG's structure); run it after changing runner/src/show/svg.rs:
#   bash bench/show_svg.sh [OUT_DIR]      (default /tmp/show-svg)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-/tmp/show-svg}
mkdir -p "$out"
runner=${RUNNER:-target/release/runner}
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome)
for args in "puzzle-03 --solution" "puzzle-04 --solution" "puzzle-06 --solution" \
    "puzzle-03 --kernel kernels/conformance/tests/fixtures/broken/p03_missing_barrier.cu" \
    "puzzle-03 --kernel kernels/conformance/tests/fixtures/broken/p03_tile_past_end.cu"; do
    name=$(echo "$args" | tr ' /' '__' | tr -cd 'A-Za-z0-9_.-')
    $runner show $args --color never --svg "$out/$name.svg" > /dev/null
    w=$(grep -o 'width="[0-9]*"' "$out/$name.svg" | head -1 | tr -cd 0-9)
    h=$(grep -o 'height="[0-9]*"' "$out/$name.svg" | head -1 | tr -cd 0-9)
    "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size="$w,$h" \
        --screenshot="$out/$name.png" "file://$(realpath "$out/$name.svg")" > /dev/null 2>&1
    python3 - "$out/$name.png" "$w" "$h" <<'PY'
import struct, sys, zlib
path, w, h = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
data = open(path, 'rb').read()
assert data[:8] == b'\x89PNG\r\n\x1a\n', 'not a PNG'
pw, ph = struct.unpack('>II', data[16:24])
assert (pw, ph) == (w, h), f'rendered {pw}x{ph}, the SVG says {w}x{h}'
# Decompress the image data and count distinct bytes: a blank page has very few.
idat = b''.join(data[i + 8:i + 8 + struct.unpack('>I', data[i:i + 4])[0]]
                for i in range(8, len(data)) if data[i + 4:i + 8] == b'IDAT')
raw = zlib.decompress(idat)
assert len(set(raw)) > 20, 'the rendering is blank'
print(f'{path}: {pw}x{ph}, rendered')
PY
done
