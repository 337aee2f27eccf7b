#!/usr/bin/env python3
"""Writes the ONNXRuntimeTests golden inputs and prints the official Python binding's outputs on them.

Run from the package root with the reference venv (onnxruntime 1.32.0 + numpy + Pillow):

    OMP_THREAD_LIMIT=1 /opt/ort-ref/bin/python Tests/ONNXRuntimeTests/Golden/make_golden.py [NEURAL_DIR]

It crops two pieces of Tests/Fixtures/tesseract-testdata/phototest.tif and stores them as binary PPM files next to
this script (the Swift test reads the same bytes, so no image decoding is needed there):
  - phototest-line.ppm: "This is a lot", resized to 192x48 (the line classifier's input size);
  - phototest-block.ppm: a 96x64 piece of the first two lines, not resized (the detector's input).
Then it runs the models with the settings InferenceSession uses and prints the numbers pasted into
ONNXRuntimeGoldenTests.swift.
"""
import os
import sys

import numpy as np
import onnxruntime as ort
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
NEURAL = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("OCRFARM_NEURAL_DIR", "/usr/local/lib/ocrfarm/neural")


def write_ppm(path, image):
    rgb = image.convert("RGB")
    with open(path, "wb") as f:
        f.write(b"P6\n%d %d\n255\n" % rgb.size)
        f.write(rgb.tobytes())


def read_ppm(path):
    """H x W x 3 uint8, the same parse as the Swift test's."""
    data = open(path, "rb").read()
    fields = data.split(b"\n", 3)
    assert fields[0] == b"P6" and fields[2] == b"255"
    width, height = map(int, fields[1].split())
    return np.frombuffer(fields[3], dtype=np.uint8).reshape(height, width, 3)


def session(model):
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.enable_cpu_mem_arena = False
    return ort.InferenceSession(os.path.join(NEURAL, model), options, providers=["CPUExecutionProvider"])


page = Image.open(os.path.join(ROOT, "Tests/Fixtures/tesseract-testdata/phototest.tif")).convert("RGB")
write_ppm(os.path.join(HERE, "phototest-line.ppm"), page.crop((34, 86, 186, 124)).resize((192, 48), Image.BILINEAR))
write_ppm(os.path.join(HERE, "phototest-block.ppm"), page.crop((34, 86, 130, 150)))

# Line classifier, a batch of four made from the crop: as is; turned 180 degrees (rows and columns reversed); its
# lower half twice (row y is row 24 + y % 24: an unsure answer); rolled down 12 rows (row y is row (y - 12) mod 48).
# Normalised (x/255 - 0.5)/0.5 in float32, channels first.
line = read_ppm(os.path.join(HERE, "phototest-line.ppm"))
turned = line[::-1, ::-1, :]
lower = np.concatenate([line[24:], line[24:]])
rolled = np.roll(line, 12, axis=0)
batch = np.stack([line, turned, lower, rolled]).transpose(0, 3, 1, 2).astype(np.float32)
batch = (batch / np.float32(255) - np.float32(0.5)) / np.float32(0.5)
cls = session("ch_ppocr_mobile_v2.0_cls_mobile.onnx")
out = cls.run(None, {cls.get_inputs()[0].name: batch})[0]
print("classifier", cls.get_inputs()[0].name, "->", cls.get_outputs()[0].name, out.shape)
print("  values", [float("%.6f" % v) for v in out.reshape(-1)])

# Detector: ImageNet mean and deviation per channel, in float32.
block = read_ppm(os.path.join(HERE, "phototest-block.ppm")).transpose(2, 0, 1).astype(np.float32)[None]
mean = np.array([0.485, 0.456, 0.406], dtype=np.float32).reshape(1, 3, 1, 1)
std = np.array([0.229, 0.224, 0.225], dtype=np.float32).reshape(1, 3, 1, 1)
block = (block / np.float32(255) - mean) / std
det = session("PP-OCRv6_det_small.onnx")
out = det.run(None, {det.get_inputs()[0].name: block})[0]
flat = out.reshape(-1).astype(np.float64)
print("detector", det.get_inputs()[0].name, "->", det.get_outputs()[0].name, out.shape)
print("  sum %.4f  mean %.6f  max %.6f  min %.6f  above0.3 %d  argmax %d" % (
    flat.sum(), flat.mean(), flat.max(), flat.min(), int((flat > 0.3).sum()), int(flat.argmax())))
for index in [0, 95, 1000, 2000, 2345, 3000, 4321, 6143, int(flat.argmax())]:
    print("  [%d] %.6f" % (index, flat[index]))

rec = session("PP-OCRv6_rec_small.onnx")
characters = rec.get_modelmeta().custom_metadata_map["character"]
print("recognizer character lines", len(characters.splitlines()))
