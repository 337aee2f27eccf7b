"""Helpers shared by the benchmark programs in Scripts/bench."""
import glob
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import zlib

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SHARED = os.path.abspath(os.path.join(ROOT, "..", "shared"))
SCORE = os.path.join(SHARED, "bench", "score.py")
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".tif", ".tiff", ".pnm", ".webp", ".jp2")


def bootstrap(*extra):
    """Installs the project's packages plus `extra` Debian packages (quiet when present)."""
    subprocess.run([os.path.join(ROOT, "Scripts", "bootstrap"), *extra], check=True)
    try:
        import rapidfuzz  # noqa: F401
    except ImportError:
        # score.py falls back to a slow pure-Python edit distance without it.
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "rapidfuzz"], check=False)


def build_release():
    """Builds ocrfarm in release mode and returns the binary's path."""
    subprocess.run(["swift", "build", "-c", "release", "--product", "ocrfarm"], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)
    bin_path = subprocess.run(["swift", "build", "-c", "release", "--show-bin-path"], cwd=ROOT, check=True,
                              capture_output=True, text=True).stdout.strip()
    return os.path.join(bin_path, "ocrfarm")


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def png_chunk(kind, data):
    """One PNG chunk: length, type, data, CRC."""
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def tiny_pngs(folder, count, label=b""):
    """`count` distinct 8x8 white PNGs (a counter in a text chunk), 1,000 per subfolder: pages for --engine none."""
    raw = b"".join(b"\x00" + b"\xff" * 8 for _ in range(8))
    head = b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", struct.pack(">IIBBBBB", 8, 8, 8, 0, 0, 0, 0))
    tail = png_chunk(b"IDAT", zlib.compress(raw)) + png_chunk(b"IEND", b"")
    for i in range(count):
        sub = os.path.join(folder, f"{i // 1000:04d}")
        if i % 1000 == 0:
            os.makedirs(sub, exist_ok=True)
        with open(os.path.join(sub, f"{i:07d}.png"), "wb") as out:
            out.write(head + png_chunk(b"tEXt", b"Comment\x00" + label + b"%d" % i) + tail)


def page_images(folder):
    return sorted(p for p in glob.glob(os.path.join(folder, "*")) if p.lower().endswith(IMAGE_SUFFIXES))


def split_json_pages(json_path, out_dir):
    """Writes NAME.txt per page from `ocrfarm ocr --format json` output, for score.py."""
    with open(json_path, encoding="utf-8") as handle:
        document = json.load(handle)
    for page in document["pages"]:
        stem = os.path.splitext(os.path.basename(page["source"]))[0]
        with open(os.path.join(out_dir, stem + ".txt"), "w", encoding="utf-8") as out:
            out.write(page.get("text", ""))


def score(gt_dir, hyp_dir, extra=()):
    """Micro-averaged CER in percent from shared/bench/score.py (its TOTAL line), or None."""
    if not os.path.exists(SCORE):
        return None
    result = subprocess.run([sys.executable, SCORE, "--gt-dir", gt_dir, "--hyp-dir", hyp_dir, "--quiet", *extra],
                            capture_output=True, text=True)
    match = re.search(r"TOTAL .*?CER=([0-9.]+)%", result.stdout)
    return float(match.group(1)) if match else None


def fmt(value):
    return "n/a" if value is None else f"{value:.2f}"


def tesseract_version():
    result = subprocess.run(["tesseract", "--version"], capture_output=True, text=True)
    return (result.stdout or result.stderr).splitlines()[0] if (result.stdout or result.stderr) else "unknown"


def polygon_area(points):
    """Area of a simple polygon by the shoelace formula (either winding)."""
    n = len(points)
    return abs(sum(points[i][0] * points[(i + 1) % n][1] - points[(i + 1) % n][0] * points[i][1]
                   for i in range(n))) / 2 if n >= 3 else 0.0


def clipped_polygon(subject, clipper):
    """`subject` cut to the convex polygon `clipper` (Sutherland–Hodgman); [] when they do not overlap."""
    def signed_area(p):
        return sum(p[i][0] * p[(i + 1) % len(p)][1] - p[(i + 1) % len(p)][0] * p[i][1] for i in range(len(p)))
    if len(clipper) < 3 or len(subject) < 3:
        return []
    # The test "left of each edge" needs the clipper counter-clockwise in a y-up sense (positive signed area).
    clipper = list(clipper) if signed_area(clipper) > 0 else list(clipper)[::-1]

    def side(p, a, b):
        return (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0])
    output = [tuple(map(float, p)) for p in subject]
    for i in range(len(clipper)):
        a, b = clipper[i], clipper[(i + 1) % len(clipper)]
        points, output = output, []
        for j in range(len(points)):
            cur, prev = points[j], points[j - 1]
            s_cur, s_prev = side(cur, a, b), side(prev, a, b)
            if s_cur >= 0:
                if s_prev < 0:
                    t = s_prev / (s_prev - s_cur)
                    output.append((prev[0] + (cur[0] - prev[0]) * t, prev[1] + (cur[1] - prev[1]) * t))
                output.append(cur)
            elif s_prev >= 0:
                t = s_prev / (s_prev - s_cur)
                output.append((prev[0] + (cur[0] - prev[0]) * t, prev[1] + (cur[1] - prev[1]) * t))
        if not output:
            return []
    return output


def in_frame(truth, found, width, height):
    """Both convex quadrilaterals clipped to the image rectangle (truth may leave the frame)."""
    frame = [(0.0, 0.0), (float(width), 0.0), (float(width), float(height)), (0.0, float(height))]
    return clipped_polygon(truth, frame), clipped_polygon(found, frame)


def quad_iou_in_frame(truth, found, width, height):
    """IoU of two convex quadrilaterals after both are clipped to the image rectangle (truth may leave the frame)."""
    a, b = in_frame(truth, found, width, height)
    if not a or not b:
        return 0.0
    inter = polygon_area(clipped_polygon(a, b))
    union = polygon_area(a) + polygon_area(b) - inter
    return inter / union if union > 0 else 0.0


def quad_kept_in_frame(truth, found, width, height):
    """The share of the truth's quadrilateral, clipped to the image rectangle, that `found` holds: 1 when the found
    outline keeps all of the document (however much desk it takes with it), less where a crop would cut it."""
    a, b = in_frame(truth, found, width, height)
    if not a or not b:
        return 0.0
    area = polygon_area(a)
    return polygon_area(clipped_polygon(a, b)) / area if area > 0 else 0.0


def ranks(values):
    """1-based ranks, ties sharing their mean rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    result = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            result[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return result


def spearman(xs, ys):
    """Spearman's rank correlation (Pearson's r of the ranks); None when either side is constant or too short."""
    if len(xs) < 3:
        return None
    rx, ry = ranks(xs), ranks(ys)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    return sxy / (sxx * syy) ** 0.5 if sxx > 0 and syy > 0 else None


# Turns pages losslessly: (source, PNG destination, clockwise degrees) per line on stdin. EXIF orientation is applied
# first, as ocrfarm's decoder would, so "upright" means what a reader of the file sees.
_TURN_SCRIPT = r"""
import sys
from PIL import Image, ImageOps
steps = {0: None, 90: Image.Transpose.ROTATE_270, 180: Image.Transpose.ROTATE_180, 270: Image.Transpose.ROTATE_90}
for line in sys.stdin:
    source, destination, degrees = line.rstrip("\n").split("\t")
    image = ImageOps.exif_transpose(Image.open(source))
    step = steps[int(degrees)]
    (image if step is None else image.transpose(step)).save(destination, format="PNG")
"""


def image_turner():
    """How pages are turned: ('pil', python) with a Python that has Pillow, ('netpbm', None), or (None, reason)."""
    candidates = [sys.executable, "/usr/bin/python3"]
    for python in candidates:
        if os.path.exists(python) and subprocess.run([python, "-c", "import PIL.ImageOps"],
                                                     capture_output=True).returncode == 0:
            return "pil", python
    if shutil.which("pnmflip") and shutil.which("anytopnm") and shutil.which("pnmtopng"):
        return "netpbm", None
    # Debian's Pillow is for Debian's Python, which then does the turning.
    bootstrap("python3-pil")
    if os.path.exists("/usr/bin/python3") and subprocess.run(["/usr/bin/python3", "-c", "import PIL.ImageOps"],
                                                             capture_output=True).returncode == 0:
        return "pil", "/usr/bin/python3"
    return None, "neither Pillow nor netpbm is available"


def turned_images(jobs, turner):
    """Writes each (source, destination.png, clockwise degrees) job; returns the destinations that exist after."""
    kind, python = turner
    if kind == "pil":
        subprocess.run([python, "-c", _TURN_SCRIPT], input="".join(f"{s}\t{d}\t{deg}\n" for s, d, deg in jobs),
                       text=True, check=False)
    elif kind == "netpbm":
        flips = {0: [], 90: ["-cw"], 180: ["-r180"], 270: ["-ccw"]}
        for source, destination, degrees in jobs:
            flip = f' | pnmflip {flips[degrees][0]}' if flips[degrees] else ""
            command = f'anytopnm "$1"{flip} | pnmtopng > "$2"'
            subprocess.run(["sh", "-c", command, "_", source, destination], stderr=subprocess.DEVNULL)
    return [d for _, d, _ in jobs if os.path.exists(d) and os.path.getsize(d) > 0]
