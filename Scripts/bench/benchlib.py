"""Helpers shared by the benchmark programs in Scripts/bench."""
import glob
import json
import os
import re
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
