"""Writes the document mask's golden files for the Swift tests (Tests/Fixtures/document-mask/).

For a fixture frame: `<stem>.input.ppm`, the frame squashed to the model's input as maskdata.input_array squashes it
(Pillow BILINEAR, RGB); `<stem>.mask.pgm`, ONNX Runtime's mask of that input (one thread), each probability times
255, rounded; `golden.json`, the model's SHA-256, the mask's sum and its cell IoU with the frame's true corners.

Usage: golden.py MODEL.onnx FRAME.jpg [FRAME.jpg ...] --out DIR
"""
import argparse
import hashlib
import json
import os
import sys

import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import maskdata  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model")
    parser.add_argument("frames", nargs="+")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    import onnxruntime as ort
    options = ort.SessionOptions(); options.intra_op_num_threads = 1; options.inter_op_num_threads = 1
    session = ort.InferenceSession(args.model, options, providers=["CPUExecutionProvider"])
    size = session.get_inputs()[0].shape[2]
    os.makedirs(args.out, exist_ok=True)
    with open(args.model, "rb") as f:
        summary = {"model_sha256": hashlib.sha256(f.read()).hexdigest(), "size": size, "frames": {}}
    for frame in args.frames:
        stem = os.path.splitext(os.path.basename(frame))[0]
        image = Image.open(frame).convert("RGB")
        x = maskdata.input_array(image, size)
        rgb = np.round(x.transpose(1, 2, 0) * 255).astype(np.uint8)
        with open(os.path.join(args.out, stem + ".input.ppm"), "wb") as f:
            f.write(f"P6\n{size} {size}\n255\n".encode() + rgb.tobytes())
        prob = session.run(["mask"], {"image": x[None]})[0][0, 0]
        with open(os.path.join(args.out, stem + ".mask.pgm"), "wb") as f:
            f.write(f"P5\n{size} {size}\n255\n".encode() + np.round(prob * 255).astype(np.uint8).tobytes())
        quad, width, height = maskdata.frame_quad(os.path.splitext(frame)[0] + ".json")
        truth = maskdata.mask_array(quad, width, height, size) > 0.5
        found = prob > 0.5
        iou = float((truth & found).sum() / max(1, (truth | found).sum()))
        summary["frames"][stem] = {"mask_sum": float(prob.sum()), "cell_iou": iou}
        print(f"golden.py: {stem}: mask sum {prob.sum():.2f}, cell IoU with the true corners {iou:.4f}")
    with open(os.path.join(args.out, "golden.json"), "w") as f:
        json.dump(summary, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
