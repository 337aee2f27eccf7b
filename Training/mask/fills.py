"""Pages that fill the frame (issue 39, decision 0097), which the mask must mark whole or the segment stage would crop
them: per photo, the share of the frame the mask marks (upsampled as outline.largest_region
does, share of all cells > 0.5) and the share inside the mask's outline (outline.quad_from_mask with the photo, i.e.
with to_edges; clipped to the frame / frame area). Groups: ocrd-degraded-and-camera (in no training pool), phone-scan-ru's photos (no pool), its held-out scans, and
its training-pool scans (not a fair check). Usage: fills.py MODEL.onnx OUT.json (a photo counts as marked whole at
0.7, the share of the detector's quadrilateral the combination asks of the mask)."""
import glob, json, os, sys
import numpy as np
from PIL import Image
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "Scripts", "bench"))
import benchlib, maskdata, outline
from evaluate import Model

REAL = maskdata.REAL
ocrd = sorted(p for p in glob.glob(os.path.join(REAL, "ocrd-degraded-and-camera", "**", "*"), recursive=True)
              if p.lower().endswith((".jpg", ".jpeg", ".png", ".tif", ".tiff")))
scans = sorted(glob.glob(os.path.join(REAL, "phone-scan-ru-sample/scan/*.jpg")))
heldout_scans = [f for i, f in enumerate(scans) if i % 4 == 3]   # as Pools("heldout")._pages keeps them
train_scans = [f for i, f in enumerate(scans) if i % 4 != 3]
photos = sorted(glob.glob(os.path.join(REAL, "phone-scan-ru-sample/photo/*.jpg")))
groups = {"ocrd-degraded-and-camera": ocrd, "phone-scan-ru scan, held out": heldout_scans,
          "phone-scan-ru photo (no pool)": photos, "phone-scan-ru scan, TRAINING pool": train_scans}
model = Model(sys.argv[1])
out = {}
for group, paths in groups.items():
    rows = []
    for path in paths:
        image = Image.open(path).convert("RGB")
        w, h = image.size
        prob = model.session.run(["mask"], {"image": maskdata.input_array(image, model.size)[None]})[0][0, 0]
        size = prob.shape[0]
        big = np.asarray(Image.fromarray(prob.astype(np.float32), "F").resize(
            (size * outline.UPSAMPLE, size * outline.UPSAMPLE), Image.BILINEAR))
        marked = float((big > 0.5).mean())
        quad = outline.quad_from_mask(prob, w, h, image)
        frame = [(0.0, 0.0), (float(w), 0.0), (float(w), float(h)), (0.0, float(h))]
        inside = 0.0 if quad is None else benchlib.polygon_area(
            benchlib.clipped_polygon([tuple(map(float, p)) for p in quad], frame) or []) / (w * h)
        rows.append({"name": os.path.relpath(path, REAL), "marked": marked, "outline": inside})
        print(f"{group:34s} {os.path.relpath(path, REAL):60s} marked {marked:.3f} outline {inside:.3f}", flush=True)
    out[group] = rows
    n = len(rows)
    print(f"== {group}: {n} photos, marked mean {np.mean([r['marked'] for r in rows]):.3f}, >=0.7: "
          f"{sum(r['marked'] >= 0.7 for r in rows)}; outline mean {np.mean([r['outline'] for r in rows]):.3f}, >=0.7: "
          f"{sum(r['outline'] >= 0.7 for r in rows)}", flush=True)
json.dump(out, open(sys.argv[2], "w"), indent=1)
