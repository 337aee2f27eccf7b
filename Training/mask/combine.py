"""Today's detector and the learned mask combined (issue 39, decision 0093 stop 41): per photo, both answers and
their evidence; the oracle (per photo the better of the two); a rule that picks one, with a confidence.

Collect (once; several minutes: `ocrfarm inspect` and the mask per photo), then report (instant, from the cache):

    PY=$(Training/mask/setup)
    nice -n 10 $PY Training/mask/combine.py collect --binary /tmp/rss/ocrfarm-58ca6a1 --rows /tmp/mask41/rows.json
    $PY Training/mask/combine.py report --rows /tmp/mask41/rows.json

Sets: midv500-sample split into the document types whose backgrounds trained the mask (`maskdata.MIDV_TRAIN_TYPES`)
and the held-out ones; smartdoc15-sample; composites of the held-out pool (seed 3939, as evaluate.py's
`composite_items`); composites of the *training* pool with a seed training did not use (4141). The rule was designed
on the design sets (midv500 training types, training-pool composites) only; the others are the check sets.

The rule (`takes_mask`, `features`, `fit_confidence`): the mask's outline when the detector is unsure of its own
(confidence < 0.5, RectifyStage's threshold) and the mask (> 0.5) fills less than 70% of the detector's quad; else the
detector's. The confidence: a logistic model of "IoU >= 0.85" over the chosen outline's evidence (an intercept per
source, the detector's confidence as log-odds, the quads' IoU, the mask's share of the chosen quad, the mask region's
solidity), fitted on the design sets by `report`, which prints its weights. Decision 0093, stop 41, has the numbers.

Each composite is written as JPEG quality 95 (as evaluate.py's baseline does) and both the detector and the mask read
that file, so both answer the same photo. IoU as Scripts/bench/real computes it (both quads clipped to the frame).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

import numpy as np
from PIL import Image, ImageDraw
from scipy import ndimage
from scipy.spatial import ConvexHull

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "Scripts", "bench"))
import benchlib  # noqa: E402
import maskdata  # noqa: E402
import outline  # noqa: E402

DESIGN = ("midv500 training types", "training-pool composites")
CHECK = ("midv500 held-out types", "smartdoc15", "held-out composites")
MISS = 0.85   # an outline below this IoU is a miss
SURE = 0.5    # RectifyStage.minimumConfidence: at or above it the outline is used


# ---------------------------------------------------------------------------------------------------------------
# Collect

def detector(binary, path):
    """Today's detector on the photo at `path`: its segment stage (corners, confidence, evidence), or None. The
    detector alone: the segment stage weighs in the mask by default (decision 0102), which is what this combines."""
    result = subprocess.run([binary, "inspect", "--json", path], capture_output=True, text=True,
                            env=dict(os.environ, OCRFARM_DOCUMENT_MASK="off"))
    try:
        segment = json.loads(result.stdout)["stages"]["segment"]
    except (ValueError, KeyError, TypeError):
        print(f"combine.py: {path}: inspect gave no segment stage (exit {result.returncode}: "
              f"{result.stderr.strip()[:200]})", flush=True)
        return None
    return segment


def polygon_cells(quad, width, height, size):
    """The quad (photo pixels) drawn on the `size` x `size` grid of the squashed photo: a boolean array."""
    canvas = Image.new("L", (size, size), 0)
    ImageDraw.Draw(canvas).polygon([(x * size / width, y * size / height) for x, y in quad], fill=1)
    return np.asarray(canvas) > 0


def sides_on_edges(image, quad):
    """How many of the quad's sides outline.to_edges would move to a straight edge of the photo (0-4)."""
    scale = min(1.0, outline.EDGE_LONG_SIDE / max(image.size))
    small = image if scale == 1 else image.resize((round(image.width * scale), round(image.height * scale)),
                                                  Image.BILINEAR)
    gray = ndimage.gaussian_filter(np.asarray(small.convert("L"), np.float32), 1.0)
    q = np.asarray(quad, np.float64) * scale
    reach = max(3, int(round(outline.EDGE_REACH_CELLS * max(gray.shape) / 128)))
    found = 0
    for s in range(4):
        a, b = q[s], q[(s + 1) % 4]
        point, direction = outline.side_line(gray, a, b, q.mean(0), reach)
        u = (b - a) / np.hypot(*(b - a))
        found += not (np.allclose(point, a) and np.allclose(direction, u))
    return found


def mask_evidence(prob, image, det_quad, mask_quad):
    """What the mask says about both quads, on its upsampled grid (outline.UPSAMPLE x 128)."""
    size = prob.shape[0] * outline.UPSAMPLE
    big = np.asarray(Image.fromarray(prob.astype(np.float32), "F").resize((size, size), Image.BILINEAR))
    on = big > 0.5
    region = outline.largest_region(prob)
    w, h = image.size
    e = {"mask_area": float(on.mean())}
    if region is not None and region.sum() >= 16:
        ys, xs = np.nonzero(region)
        try:
            hull = ConvexHull(np.stack([xs, ys], 1).astype(float) + 0.5)
            e["solidity"] = float(region.sum() / max(1.0, hull.volume))
        except Exception:
            e["solidity"] = 0.0
        e["region_share"] = float(region.sum() / on.sum())
    else:
        e["solidity"], e["region_share"] = 0.0, 0.0
    for key, quad in (("det", det_quad), ("mq", mask_quad)):
        if quad is None:
            continue
        inside = polygon_cells(quad, w, h, size)
        e[f"{key}_prob_in"] = float(big[inside].mean()) if inside.any() else 0.0
        e[f"{key}_prob_out"] = float(big[~inside].mean()) if (~inside).any() else 0.0
        e[f"{key}_holds"] = float((on & inside).sum() / max(1, on.sum()))   # share of the mask inside the quad
        e[f"{key}_filled"] = float((on & inside).sum() / max(1, inside.sum()))  # share of the quad that is mask
    if det_quad is not None and mask_quad is not None:
        e["quads_iou"] = benchlib.quad_iou_in_frame(det_quad, mask_quad, w, h)
    if mask_quad is not None:
        e["mq_edges"] = sides_on_edges(image, mask_quad)
    if det_quad is not None:
        e["det_edges"] = sides_on_edges(image, det_quad)
    return e


def photo_row(name, path, truth, binary, session, size):
    image = Image.open(path).convert("RGB")
    image.load()
    w, h = image.size
    segment = detector(binary, path)
    det_quad = None if segment is None or not segment.get("corners") else [tuple(p) for p in segment["corners"]]
    prob = session.run(["mask"], {"image": maskdata.input_array(image, size)[None]})[0][0, 0]
    plain = outline.quad_from_mask(prob, w, h)
    mask_quad = None if plain is None else [tuple(map(float, p)) for p in outline.ordered(outline.to_edges(image, plain))]
    row = {"name": name, "width": w, "height": h, "truth": truth,
           "det": det_quad, "det_conf": None if segment is None else segment.get("confidence"),
           "det_full_frame": None if segment is None else segment.get("full_frame"),
           "det_evidence": None if segment is None else segment.get("evidence"),
           "mask": mask_quad,
           "det_iou": 0.0 if det_quad is None else benchlib.quad_iou_in_frame(truth, det_quad, w, h),
           "mask_iou": 0.0 if mask_quad is None else benchlib.quad_iou_in_frame(truth, mask_quad, w, h)}
    row["evidence"] = mask_evidence(prob, image, det_quad, mask_quad)
    return row, prob


def real_photos(pattern, keep=lambda path: True):
    import glob
    for path in sorted(glob.glob(os.path.join(maskdata.REAL, pattern))):
        if keep(path):
            quad, _, _ = maskdata.frame_quad(os.path.splitext(path)[0] + ".json")
            yield os.path.basename(path), path, quad


def composite_photos(split, count, seed, folder):
    """Composites as evaluate.py's composite_items makes them (split "heldout", seed 3939 there; the target clearly
    the photo's document), written as JPEG 95."""
    pools = maskdata.Pools(split)
    rng = np.random.default_rng(seed)
    for i, (image, quad) in enumerate(maskdata.clear_composites(pools, rng, count, long_side=1280)):
        name = f"{split}-{seed}-{i:03d}"
        path = os.path.join(folder, name + ".jpg")
        image.save(path, "JPEG", quality=95)
        yield name, path, [tuple(map(float, p)) for p in quad]


def collect(args):
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(args.model, options, providers=["CPUExecutionProvider"])
    size = session.get_inputs()[0].shape[2]
    folder = os.path.dirname(os.path.abspath(args.rows))
    photos = os.path.join(folder, "photos")
    os.makedirs(photos, exist_ok=True)
    midv_type = lambda path: os.path.basename(path).split("_")[1]  # noqa: E731
    sets = {
        "midv500 training types": lambda: real_photos("midv500-sample/*.jpg",
                                                      lambda p: midv_type(p) in maskdata.MIDV_TRAIN_TYPES),
        "midv500 held-out types": lambda: real_photos("midv500-sample/*.jpg",
                                                      lambda p: midv_type(p) in maskdata.MIDV_HELDOUT_TYPES),
        "smartdoc15": lambda: real_photos("smartdoc15-sample/*.jpeg"),
        "held-out composites": lambda: composite_photos("heldout", args.heldout, args.heldout_seed, photos),
        "training-pool composites": lambda: composite_photos("train", args.train, args.train_seed, photos),
    }
    rows = {}
    if os.path.exists(args.rows):
        with open(args.rows) as f:
            rows = json.load(f)
    for name, items in sets.items():
        if name in rows:
            print(f"{name}: cached ({len(rows[name])} photos)", flush=True)
            continue
        rows[name], probs = [], {}
        for photo, path, truth in items():
            row, probs[photo] = photo_row(photo, path, truth, args.binary, session, size)
            rows[name].append(row)
        np.savez_compressed(os.path.join(folder, name.replace(" ", "-") + ".npz"), **probs)
        with open(args.rows, "w") as f:
            json.dump(rows, f)
        print(f"{name}: {len(rows[name])} photos collected", flush=True)
    return 0


# ---------------------------------------------------------------------------------------------------------------
# Report

def summary(ious, confidences=None):
    text = (f"mean {statistics.mean(ious):.3f}, median {statistics.median(ious):.3f}, "
            f"below {MISS}: {sum(i < MISS for i in ious):3d}")
    if confidences is not None:
        text += f", confident misses {sum(i < MISS and c >= SURE for i, c in zip(ious, confidences)):3d}"
    return text


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    c = commands.add_parser("collect", help="run both on every photo, cache the rows")
    c.add_argument("--binary", required=True, help="the ocrfarm release binary whose inspect --json is today's detector")
    c.add_argument("--model", default=os.path.join(HERE, "model", "document-mask.onnx"))
    c.add_argument("--rows", required=True, help="the JSON cache (its folder also gets the composites and masks)")
    c.add_argument("--heldout", type=int, default=100)
    c.add_argument("--heldout-seed", type=int, default=3939)
    c.add_argument("--train", type=int, default=150)
    c.add_argument("--train-seed", type=int, default=4141)
    r = commands.add_parser("report", help="oracle, each alone, the rule, per set, from the cache")
    r.add_argument("--rows", required=True)
    r.add_argument("--worst", type=int, default=0, help="also list this many worst photos of each set")
    args = parser.parse_args()
    return collect(args) if args.command == "collect" else report(args)


def report(args):
    with open(args.rows) as f:
        rows = json.load(f)
    print("Oracle (per photo the better of today's detector and the mask's outline) and each alone:")
    for name in DESIGN + CHECK:
        r = rows[name]
        print(f"  {name:26s} {len(r):3d} photos | oracle "
              + summary([max(x["det_iou"], x["mask_iou"]) for x in r])
              + " | detector " + summary([x["det_iou"] for x in r], [x["det_conf"] or 0 for x in r])
              + " | mask " + summary([x["mask_iou"] for x in r]))
    weights = fit_confidence([x for name in DESIGN for x in rows[name]])
    print("Confidence weights, fitted on the design sets only (" + ", ".join(DESIGN) + "):")
    print("  " + ", ".join(f"{k} {w:+.4f}" for k, w in zip(FEATURES, weights)))
    print(f"The rule: the mask's outline when the detector is unsure (confidence < {UNSURE}) and the mask fills "
          f"less than {FILLED:.0%} of its quad; else the detector's. Confidence: the refitted model.")
    for name in DESIGN + CHECK:
        chosen = [combined(x, weights) for x in rows[name]]
        ious = [iou for _, iou, _ in chosen]
        switched = sum(which == "mask" for which, _, _ in chosen)
        hits_lost = sum(iou >= MISS and c < SURE for _, iou, c in chosen)
        print(f"  {'design' if name in DESIGN else 'check ':6s} {name:26s} rule " + summary(ious, [c for *_, c in chosen])
              + f"; mask taken {switched}, right outlines below {SURE} confidence {hits_lost}")
        for x, (which, iou, c) in sorted(zip(rows[name], chosen), key=lambda t: t[1][1])[:args.worst]:
            e = x["evidence"]
            print(f"      {x['name']:24s} {which:8s} IoU {iou:.3f} conf {c:.2f} (detector {x['det_iou']:.3f} at "
                  f"{x['det_conf'] or 0:.2f}, mask {x['mask_iou']:.3f}; quads IoU {e.get('quads_iou', 0):.2f}, "
                  f"mask fills detector's quad {e.get('det_filled', 0):.2f})")
    return 0


# ---------------------------------------------------------------------------------------------------------------
# The rule

UNSURE = 0.5   # the detector's confidence below which its outline is not used today (RectifyStage)
FILLED = 0.7   # the share of the detector's quad the mask (> 0.5) must fill for the detector's quad to stand
FEATURES = ("detector's outline", "mask's outline", "detector's confidence (log-odds)", "quads' IoU",
            "mask's share of the chosen quad", "mask region's solidity (mask chosen)")


def takes_mask(row):
    """The mask's outline replaces the detector's when the detector is unsure of its own (below RectifyStage's
    threshold: today the page would go uncropped) and the mask does not fill its quad (the detector's quad is mostly
    desk or other sheets: the whole frame, a sheet under the target) and there is a mask outline at all."""
    e = row["evidence"]
    return (row["mask"] is not None and (row["det_conf"] or 0) < UNSURE
            and (row["det"] is None or e.get("det_filled", 0) < FILLED))


def features(row, mask):
    """The chosen outline's evidence for the confidence model: an intercept per source, the detector's own
    confidence as log-odds (its outline only), how far both outlines agree, how much of the chosen quad the mask
    fills, the mask region's solidity (its outline only)."""
    e = row["evidence"]
    if mask:
        return [0.0, 1.0, 0.0, e.get("quads_iou", 0.0), e.get("mq_filled", 0.0), e.get("solidity", 0.0)]
    p = min(max(row["det_conf"] or 0.0, 1e-3), 1 - 1e-3)
    return [1.0, 0.0, float(np.log(p / (1 - p))), e.get("quads_iou", 0.0), e.get("det_filled", 0.0), 0.0]


def fit_confidence(rows, strength=1.0, rounds=60):
    """Logistic regression of "the chosen outline's IoU >= MISS" on `features`, L2 (weight 1/strength) on all but
    the two intercepts, Newton's method (deterministic)."""
    x = np.array([features(r, takes_mask(r)) for r in rows])
    y = np.array([(r["mask_iou"] if takes_mask(r) else r["det_iou"]) >= MISS for r in rows], float)
    penalty = np.full(x.shape[1], 1.0 / strength)
    penalty[:2] = 0.0
    w = np.zeros(x.shape[1])
    for _ in range(rounds):
        p = 1 / (1 + np.exp(-x @ w))
        hessian = x.T @ (x * (p * (1 - p))[:, None]) + np.diag(penalty) + 1e-9 * np.eye(len(w))
        w -= np.linalg.solve(hessian, x.T @ (p - y) + penalty * w)
    return w


def combined(row, weights):
    """(which outline, its IoU, the confidence) for one photo."""
    mask = takes_mask(row)
    confidence = float(1 / (1 + np.exp(-np.dot(weights, features(row, mask)))))
    return ("mask", row["mask_iou"], confidence) if mask else ("detector", row["det_iou"], confidence)


if __name__ == "__main__":
    sys.exit(main())
