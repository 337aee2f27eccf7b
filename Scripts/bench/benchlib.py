"""Helpers shared by the benchmark programs in Scripts/bench."""
import glob
import json
import os
import re
import subprocess
import sys

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
