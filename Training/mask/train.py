"""Trains the document-mask network (issue 39) on CPU with JAX, exports it to ONNX and checks the export.

The network: a small U-Net on the whole photo squashed to SIZE x SIZE (RGB in [0, 1]), five levels (strided 3x3
convolutions down, nearest-neighbour 2x up, skip concatenations), ReLU, no normalisation layers, one logit per cell:
the probability that the cell lies on the document. Input `image` [1, 3, S, S] float32, output `mask` [1, 1, S, S]
(sigmoid). The ONNX graph is written op by op from the same parameters (Conv, Relu, Resize nearest, Concat,
Sigmoid; opset 17) and checked against the JAX forward pass on held-out composites.

Usage: train.py --out DIR [--tiny] [--samples N] [--steps N] [--batch N] [--seed N] [--workers N]
                [--cpu-minutes M] [--wall-minutes M] [--stop-file FILE] [--cache FILE.npz] [--data first|richer]
                [--pale-edge SHARE] [--fills-frame SHARE] [--init PARAMS.npz]
"""
import argparse
import json
import math
import multiprocessing
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import maskdata  # noqa: E402

CHANNELS = (8, 16, 32, 48, 64)
TINY_CHANNELS = (4, 8, 8, 8, 8)


def layer_shapes(channels):
    """(name, out, in, kernel) of every convolution, in the order the forward pass uses them."""
    shapes = [("enc0a", channels[0], 3, 3), ("enc0b", channels[0], channels[0], 3)]
    for i in range(1, len(channels)):
        shapes += [(f"down{i}", channels[i], channels[i - 1], 3), (f"enc{i}", channels[i], channels[i], 3)]
    for i in range(len(channels) - 2, -1, -1):
        shapes.append((f"up{i}", channels[i], channels[i + 1] + channels[i], 3))
    shapes.append(("head", 1, channels[0], 1))
    return shapes


def initial_params(channels, seed):
    rng = np.random.default_rng(seed)
    params = {}
    for name, out, inp, k in layer_shapes(channels):
        std = math.sqrt(2.0 / (inp * k * k))
        params[name + ".w"] = (rng.normal(0, std, (out, inp, k, k))).astype(np.float32)
        params[name + ".b"] = np.zeros((out,), np.float32)
    return params


def forward(params, x, channels, jnp, lax):
    """The network in JAX: x [N, 3, S, S] -> logits [N, 1, S, S]."""
    def conv(name, x, stride=1):
        w = params[name + ".w"]
        pad = w.shape[-1] // 2
        y = lax.conv_general_dilated(x, w, (stride, stride), ((pad, pad), (pad, pad)),
                                     dimension_numbers=("NCHW", "OIHW", "NCHW"))
        return y + params[name + ".b"][None, :, None, None]

    relu = lambda v: jnp.maximum(v, 0)  # noqa: E731
    x = (x - 0.5) / 0.25
    skips = []
    h = relu(conv("enc0b", relu(conv("enc0a", x))))
    skips.append(h)
    for i in range(1, len(channels)):
        h = relu(conv(f"enc{i}", relu(conv(f"down{i}", h, 2))))
        skips.append(h)
    for i in range(len(channels) - 2, -1, -1):
        h = jnp.repeat(jnp.repeat(h, 2, axis=2), 2, axis=3)
        h = relu(conv(f"up{i}", jnp.concatenate([h, skips[i]], axis=1)))
    return conv("head", h)


def export_onnx(params, channels, size, path):
    """The same network as an ONNX graph (opset 17), weights as initializers."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    nodes, inits = [], []
    inits.append(numpy_helper.from_array(np.array([0.5], np.float32), "mean"))
    inits.append(numpy_helper.from_array(np.array([4.0], np.float32), "inv_std"))
    inits.append(numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales"))
    for key, value in params.items():
        inits.append(numpy_helper.from_array(np.asarray(value, np.float32), key))
    nodes.append(helper.make_node("Sub", ["image", "mean"], ["centred"]))
    nodes.append(helper.make_node("Mul", ["centred", "inv_std"], ["x"]))

    def conv(name, src, stride=1, relu=True):
        k = params[name + ".w"].shape[-1]
        pad = k // 2
        out = name if not relu else name + ".pre"
        nodes.append(helper.make_node("Conv", [src, name + ".w", name + ".b"], [out], kernel_shape=[k, k],
                                      strides=[stride, stride], pads=[pad, pad, pad, pad]))
        if relu:
            nodes.append(helper.make_node("Relu", [out], [name]))
        return name

    h = conv("enc0b", conv("enc0a", "x"))
    skips = [h]
    for i in range(1, len(channels)):
        h = conv(f"enc{i}", conv(f"down{i}", h, 2))
        skips.append(h)
    for i in range(len(channels) - 2, -1, -1):
        nodes.append(helper.make_node("Resize", [h, "", "scales"], [f"upsampled{i}"], mode="nearest",
                                      coordinate_transformation_mode="asymmetric", nearest_mode="floor"))
        nodes.append(helper.make_node("Concat", [f"upsampled{i}", skips[i]], [f"joined{i}"], axis=1))
        h = conv(f"up{i}", f"joined{i}")
    conv("head", h, relu=False)
    nodes.append(helper.make_node("Sigmoid", ["head"], ["mask"]))
    graph = helper.make_graph(nodes, "document_mask",
                              [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, size, size])],
                              [helper.make_tensor_value_info("mask", TensorProto.FLOAT, [1, 1, size, size])],
                              inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="ocrfarm-mask")
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)


def make_samples(args):
    split, seed, count, size, long_side, limit, richer, pale_edge, fills_frame = args
    pools = maskdata.Pools(split, limit=limit, richer=richer and split == "train",
                           pale_edge=pale_edge if split == "train" else 0.0,
                           fills_frame=fills_frame if split == "train" else 0.0)
    return maskdata.batch(pools, np.random.default_rng(seed), count, size, long_side)


def dataset(split, seed, count, size, workers, long_side=320, limit=None, richer=False, pale_edge=0.0,
            fills_frame=0.0):
    """`count` composites of `split`, made by `workers` processes (each its own seed); `richer`: the stop-42
    training additions, `pale_edge`: stop 43's pale surfaces cut by the frame, `fills_frame`: stop 44's pages that
    fill the frame (maskdata.Pools), never for the held-out split."""
    if workers <= 1 or count < 2 * workers:
        return make_samples((split, seed, count, size, long_side, limit, richer, pale_edge, fills_frame))
    parts = [count // workers + (1 if i < count % workers else 0) for i in range(workers)]
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        results = pool.map(make_samples, [(split, seed * 1000 + i, n, size, long_side, limit, richer, pale_edge,
                                           fills_frame)
                                               for i, n in enumerate(parts)])
    return np.concatenate([r[0] for r in results]), np.concatenate([r[1] for r in results])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="folder for document-mask.onnx, params.npz and training.json")
    parser.add_argument("--tiny", action="store_true", help="a tiny configuration that runs end to end in seconds")
    parser.add_argument("--size", type=int, default=128)
    parser.add_argument("--channels", default=",".join(map(str, CHANNELS)),
                        help="channels of the five levels, comma-separated (default %(default)s)")
    parser.add_argument("--samples", type=int, default=6000)
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--seed", type=int, default=39)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--cpu-minutes", type=float, default=30.0,
                        help="stop training after this many CPU minutes of this process (all its threads)")
    parser.add_argument("--wall-minutes", type=float, default=120.0, help="and after this many wall minutes")
    parser.add_argument("--stop-file", help="training ends (and the model is exported) once this file exists")
    parser.add_argument("--cache", help="an .npz of the composites: read when it exists, else written")
    parser.add_argument("--data", choices=("first", "richer"), default="richer",
                        help="training composites: the first models' (real crops of six midv500 types only) or "
                             "with stop 42's procedural desks, desk objects and dark figures (default)")
    parser.add_argument("--pale-edge", type=float, default=0.0,
                        help="the share of training composites with a pale surface or sheet cut by the frame's edge "
                             "under everything (stop 43; default %(default)s)")
    parser.add_argument("--fills-frame", type=float, default=0.0,
                        help="the share of training composites whose target page fills the frame, 0-2 of its sides "
                             "just inside the frame's edges (stop 44; default %(default)s)")
    parser.add_argument("--init", help="start from this params.npz (same channels) instead of random weights")
    args = parser.parse_args()
    if args.tiny:
        args.size, args.samples, args.steps, args.batch, args.workers = 32, 48, 30, 8, 1
    channels = TINY_CHANNELS if args.tiny else tuple(int(c) for c in args.channels.split(","))
    if len(channels) != len(CHANNELS):
        parser.error(f"--channels: {len(CHANNELS)} levels, got {args.channels}")
    os.makedirs(args.out, exist_ok=True)

    import jax
    import jax.numpy as jnp
    from jax import lax

    started = time.time()
    limit = 6 if args.tiny else None
    if args.cache and os.path.exists(args.cache):
        cached = np.load(args.cache)
        xs, ys, checks_x, checks_y = cached["xs"], cached["ys"], cached["checks_x"], cached["checks_y"]
    else:
        xs, ys = dataset("train", args.seed, args.samples, args.size, args.workers, limit=limit,
                         richer=args.data == "richer", pale_edge=args.pale_edge, fills_frame=args.fills_frame)
        checks_x, checks_y = dataset("heldout", args.seed + 1, 16 if args.tiny else 100, args.size, 1, limit=limit)
        if args.cache:
            np.savez(args.cache, xs=xs, ys=ys, checks_x=checks_x, checks_y=checks_y)
    made = time.time() - started
    print(f"train.py: {len(xs)} training and {len(checks_x)} held-out composites in {made:.0f} s", flush=True)

    start = initial_params(channels, args.seed)
    if args.init:
        loaded = np.load(args.init)
        if set(loaded.files) != set(start) or any(loaded[k].shape != start[k].shape for k in start):
            parser.error(f"--init {args.init}: not the parameters of a {','.join(map(str, channels))} network")
        start = {k: loaded[k] for k in start}
    params = {k: jnp.asarray(v) for k, v in start.items()}

    def loss_fn(p, x, y):
        logits = forward(p, x, channels, jnp, lax)
        bce = jnp.mean(jnp.maximum(logits, 0) - logits * y + jnp.log1p(jnp.exp(-jnp.abs(logits))))
        prob = jax.nn.sigmoid(logits)
        inter = jnp.sum(prob * y, axis=(1, 2, 3)); total = jnp.sum(prob + y, axis=(1, 2, 3))
        dice = 1 - jnp.mean((2 * inter + 1) / (total + 1))
        return bce + dice

    b1, b2, eps = 0.9, 0.999, 1e-8

    @jax.jit
    def step(p, m, v, t, lr, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(p, x, y)
        m = {k: b1 * m[k] + (1 - b1) * grads[k] for k in p}
        v = {k: b2 * v[k] + (1 - b2) * grads[k] ** 2 for k in p}
        p = {k: p[k] - lr * (m[k] / (1 - b1 ** t)) / (jnp.sqrt(v[k] / (1 - b2 ** t)) + eps) for k in p}
        return p, m, v, loss

    @jax.jit
    def predict(p, x):
        return jax.nn.sigmoid(forward(p, x, channels, jnp, lax))

    def held_out_iou(p):
        probs = np.concatenate([np.asarray(predict(p, jnp.asarray(checks_x[i:i + 16])))
                                for i in range(0, len(checks_x), 16)])
        a = probs > 0.5; b = checks_y > 0.5
        return float(np.mean([(a[i] & b[i]).sum() / max(1, (a[i] | b[i]).sum()) for i in range(len(a))]))

    m = {k: jnp.zeros_like(v) for k, v in params.items()}
    v = {k: jnp.zeros_like(w) for k, w in params.items()}
    rng = np.random.default_rng(args.seed)
    history = []
    train_start = time.time()
    train_cpu = time.process_time()

    def spent(cpu_start):
        """(CPU minutes, wall minutes) since training began."""
        return (time.process_time() - cpu_start) / 60, (time.time() - train_start) / 60

    steps_run = 0
    for t in range(1, args.steps + 1):
        # Cosine decay over the steps or the time budget, whichever runs out first.
        progress = min(1.0, max((t - 1) / args.steps, spent(train_cpu)[0] / args.cpu_minutes,
                                spent(train_cpu)[1] / args.wall_minutes))
        lr = args.lr * 0.5 * (1 + math.cos(math.pi * progress))
        idx = rng.integers(0, len(xs), args.batch)
        x, y = xs[idx], ys[idx]
        if rng.random() < 0.5:  # the labels follow every flip
            x, y = x[..., ::-1], y[..., ::-1]
        params, m, v, loss = step(params, m, v, t, lr, jnp.asarray(x), jnp.asarray(y))
        steps_run = t
        if t % 250 == 0 or t == args.steps:
            iou = held_out_iou(params)
            cpu, wall = spent(train_cpu)
            history.append({"step": t, "loss": float(loss), "heldout_pixel_iou": iou, "cpu_minutes": cpu,
                            "wall_minutes": wall})
            print(f"train.py: step {t} loss {float(loss):.4f} held-out pixel IoU {iou:.4f} "
                  f"({cpu:.1f} CPU min, {wall:.1f} wall min)", flush=True)
        cpu, wall = spent(train_cpu)
        if cpu > args.cpu_minutes or wall > args.wall_minutes or (args.stop_file and os.path.exists(args.stop_file)):
            print(f"train.py: stopped at step {t}: {cpu:.1f} CPU minutes, {wall:.1f} wall minutes spent", flush=True)
            break
    final_iou = held_out_iou(params)

    numpy_params = {k: np.asarray(w) for k, w in params.items()}
    np.savez(os.path.join(args.out, "params.npz"), **numpy_params)
    onnx_path = os.path.join(args.out, "document-mask.onnx")
    export_onnx(numpy_params, channels, args.size, onnx_path)

    # The export must compute what JAX computes.
    import onnxruntime as ort
    options = ort.SessionOptions(); options.intra_op_num_threads = 1; options.inter_op_num_threads = 1
    session = ort.InferenceSession(onnx_path, options, providers=["CPUExecutionProvider"])
    worst = 0.0
    for i in range(min(len(checks_x), 32)):
        ours = np.asarray(predict(params, jnp.asarray(checks_x[i:i + 1])))
        theirs = session.run(["mask"], {"image": checks_x[i:i + 1]})[0]
        worst = max(worst, float(np.abs(ours - theirs).max()))
    ok = worst < 1e-4
    print(f"train.py: ONNX vs JAX max |difference| {worst:.2e} over {min(len(checks_x), 32)} inputs: "
          f"{'ok' if ok else 'MISMATCH'}", flush=True)
    summary = {"channels": list(channels), "size": args.size, "samples": len(xs), "steps": steps_run,
               "batch": args.batch, "lr": args.lr, "seed": args.seed, "data": args.data, "pale_edge": args.pale_edge,
               "fills_frame": args.fills_frame, "init": args.init,
               "data_seconds": made,
               "train_cpu_minutes": spent(train_cpu)[0], "train_wall_minutes": spent(train_cpu)[1], "heldout_pixel_iou": final_iou,
               "onnx_max_abs_difference": worst, "parameters": int(sum(w.size for w in numpy_params.values())),
               "onnx_bytes": os.path.getsize(onnx_path), "history": history,
               "versions": {"jax": jax.__version__, "numpy": np.__version__, "onnxruntime": ort.__version__}}
    with open(os.path.join(args.out, "training.json"), "w") as f:
        json.dump(summary, f, indent=1)
    print(f"train.py: {summary['parameters']} parameters, {summary['onnx_bytes']} bytes of ONNX, held-out pixel "
          f"IoU {final_iou:.4f}; {time.time() - started:.0f} s in all", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
