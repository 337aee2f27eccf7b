"""Measures a document-mask model: IoU of the quadrilateral from its mask (outline.py) with the true corners.

Sets: real/midv500-sample (its frames split into the document types whose backgrounds and cards training used and
the held-out ones), real/smartdoc15-sample (a desk training never saw), and composites made now from the held-out
pool (other backgrounds and other documents than training's). `--sets design` measures the design sets instead
(what outline.py's constants were chosen on; decision 0093, stop 43): midv500's training types, composites of the
training pool (seed 4141, without the stop-42 additions) and training-pool composites that all have a pale surface or
sheet cut by the frame's edge (seed 4343, `maskdata.pale_edge_surface`). IoU as Scripts/bench/real computes it (both quads
clipped to the frame). Time: decode excluded; resize to the input, one ONNX Runtime thread, outline (with its
edge fit unless --no-edges). Beside the IoU, the mask itself on the model's grid against the true quadrilateral:
what it marks outside the document and what of the document it misses, each as a share of the document's area
(desk marked around a card, a page cropped).

Usage: evaluate.py MODEL.onnx [--composites N] [--seed N] [--json OUT] [--baseline OCRFARM] [--no-edges]
                   [--sets check|design] [--regions largest|evidence]
"""
import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "Scripts", "bench"))
import benchlib  # noqa: E402
import maskdata  # noqa: E402
import outline  # noqa: E402


class Model:
    def __init__(self, path, edges=True, evidence=False):
        import onnxruntime as ort
        self.edges = edges
        self.evidence = evidence
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        self.session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
        self.size = self.session.get_inputs()[0].shape[2]

    def corners(self, image):
        """The outline from the mask, and the mask's probabilities on the model's grid."""
        x = maskdata.input_array(image, self.size)[None]
        prob = self.session.run(["mask"], {"image": x})[0][0, 0]
        quad = outline.quad_from_mask(prob, image.width, image.height, image if self.edges else None,
                                     self.evidence)
        return (None if quad is None else [tuple(map(float, p)) for p in quad]), prob


def marking(prob, truth, width, height):
    """The mask (probability > 0.5) against the true quadrilateral on the same grid: the share of the document's
    area marked outside it, and the share of the document not marked."""
    inside = maskdata.mask_array(truth, width, height, prob.shape[0]) > 0.5
    marked = prob > 0.5
    area = max(1, int(inside.sum()))
    return float((marked & ~inside).sum()) / area, float((inside & ~marked).sum()) / area


def measure(model, items):
    """items: (name, PIL image, true corners). Rows of name, IoU, seconds, the mask's overmark and undermark."""
    rows = []
    for name, image, truth in items:
        started = time.process_time()
        found, prob = model.corners(image)
        seconds = time.process_time() - started
        iou = 0.0 if found is None else benchlib.quad_iou_in_frame(truth, found, image.width, image.height)
        over, under = marking(prob, truth, image.width, image.height)
        rows.append({"name": name, "iou": iou, "seconds": seconds, "found": found, "overmark": over,
                     "undermark": under})
    return rows


def baseline_rows(binary, items, folder):
    """Today's detector on the same photos: `BINARY inspect --json` per photo, written as JPEG quality 95 into
    `folder` (as Scripts/bench/real reads the segment stage's corners), with the mask off (it is on by default,
    decision 0102): the baseline the mask alone is measured against."""
    rows = []
    for name, image, truth in items:
        path = os.path.join(folder, name + ".jpg")
        image.save(path, "JPEG", quality=95)
        result = subprocess.run([binary, "inspect", "--json", path], capture_output=True, text=True,
                                env=dict(os.environ, OCRFARM_DOCUMENT_MASK="off"))
        try:
            segment = json.loads(result.stdout)["stages"]["segment"]
            found = [tuple(p) for p in segment["corners"]]
            iou = benchlib.quad_iou_in_frame(truth, found, image.width, image.height)
        except (ValueError, KeyError, TypeError):
            print(f"evaluate.py: {name}: inspect gave no corners (exit {result.returncode}: "
                  f"{result.stderr.strip()[:200]})", flush=True)
            iou = 0.0
        rows.append({"name": name, "iou": iou, "seconds": 0.0, "found": None, "overmark": None, "undermark": None})
    return rows


def real_items(pattern, keep=lambda path: True):
    for path in sorted(glob.glob(os.path.join(maskdata.REAL, pattern))):
        if not keep(path):
            continue
        quad, _, _ = maskdata.frame_quad(os.path.splitext(path)[0] + ".json")
        image = Image.open(path).convert("RGB")
        image.load()
        yield os.path.basename(path), image, quad


def composite_items(count, seed, pools=None):
    """Composites (the held-out pool unless `pools` says) whose target is clearly the photo's document
    (`maskdata.clear_composites`)."""
    pools = pools or maskdata.Pools("heldout")
    rng = np.random.default_rng(seed)
    for i, (image, quad) in enumerate(maskdata.clear_composites(pools, rng, count, long_side=1280)):
        yield f"composite-{i:03d}", image, quad


def report(name, rows):
    ious = [r["iou"] for r in rows]
    worst = sorted(rows, key=lambda r: r["iou"])[:3]
    overs = [r["overmark"] for r in rows if r["overmark"] is not None]
    unders = [r["undermark"] for r in rows if r["undermark"] is not None]
    marks = (f"; mask outside the document {100 * statistics.mean(overs):.1f}% of its area, document missed "
             f"{100 * statistics.mean(unders):.1f}%") if overs else ""
    print(f"{name}: {len(rows)} photos, IoU mean {statistics.mean(ious):.4f}, median {statistics.median(ious):.4f}, "
          f"min {min(ious):.4f}; below 0.85: {sum(i < 0.85 for i in ious)}{marks}; median CPU "
          f"{1000 * statistics.median(r['seconds'] for r in rows):.0f} ms; worst: "
          + ", ".join(f"{r['name']} {r['iou']:.3f}" for r in worst), flush=True)
    return {"photos": len(rows), "mean": statistics.mean(ious), "median": statistics.median(ious), "min": min(ious),
            "below_0.85": sum(i < 0.85 for i in ious),
            "overmark": statistics.mean(overs) if overs else None,
            "undermark": statistics.mean(unders) if unders else None,
            "median_ms": 1000 * statistics.median(r["seconds"] for r in rows),
            "rows": [{k: r[k] for k in ("name", "iou", "overmark", "undermark")} for r in rows]}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model")
    parser.add_argument("--composites", type=int, default=200)
    parser.add_argument("--seed", type=int, default=3939)
    parser.add_argument("--json")
    parser.add_argument("--no-edges", action="store_true",
                        help="the outline from the mask alone, its sides not fitted to the photo's edges")
    parser.add_argument("--baseline", metavar="OCRFARM",
                        help="also run today's detector (this ocrfarm binary's inspect) on the composites")
    parser.add_argument("--sets", choices=("check", "design"), default="check",
                        help="the check sets (default) or the design sets outline.py's constants were chosen on")
    parser.add_argument("--regions", choices=("largest", "evidence"), default="largest",
                        help="the mask's region the outline takes: the largest (outline.py's reference) or the one "
                             "its evidence favours (stop 43)")
    args = parser.parse_args()
    model = Model(args.model, edges=not args.no_edges, evidence=args.regions == "evidence")
    midv_type = lambda path: os.path.basename(path).split("_")[1]  # noqa: E731
    if args.sets == "design":
        return design(model, args, midv_type)
    results = {
        "midv500 (training types)": report("midv500-sample, types whose backgrounds and cards trained",
                                           measure(model, real_items("midv500-sample/*.jpg",
                                                   lambda p: midv_type(p) in maskdata.MIDV_TRAIN_TYPES))),
        "midv500 (held-out types)": report("midv500-sample, held-out types " + ",".join(maskdata.MIDV_HELDOUT_TYPES),
                                           measure(model, real_items("midv500-sample/*.jpg",
                                                   lambda p: midv_type(p) in maskdata.MIDV_HELDOUT_TYPES))),
        "smartdoc15": report("smartdoc15-sample (desk not in training)",
                             measure(model, real_items("smartdoc15-sample/*.jpeg"))),
        "composites": report("held-out composites (other backgrounds and documents)",
                             measure(model, composite_items(args.composites, args.seed))),
    }
    if args.baseline:
        with tempfile.TemporaryDirectory() as folder:
            results["composites, today's detector"] = report(
                "held-out composites, today's detector (ocrfarm inspect)",
                baseline_rows(args.baseline, composite_items(args.composites, args.seed), folder))
    everything = results["midv500 (training types)"]["rows"] + results["midv500 (held-out types)"]["rows"]
    print(f"midv500-sample, all {len(everything)}: IoU mean {statistics.mean(r['iou'] for r in everything):.4f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


def design(model, args, midv_type):
    """The design sets: midv500's training types, 150 training-pool composites (seed 4141), 150 with a pale surface
    or sheet cut by the frame's edge (seed 4343)."""
    results = {
        "midv500 (training types)": report("midv500-sample, types whose backgrounds and cards trained",
                                           measure(model, real_items("midv500-sample/*.jpg",
                                                   lambda p: midv_type(p) in maskdata.MIDV_TRAIN_TYPES))),
        "training-pool composites": report("training-pool composites (seed 4141)", measure(
            model, composite_items(150, 4141, maskdata.Pools("train")))),
        "pale-edge composites": report("training-pool composites with a pale surface cut by the frame (seed 4343)",
                                       measure(model, composite_items(150, 4343, maskdata.Pools("train", pale_edge=1.0)))),
    }
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
