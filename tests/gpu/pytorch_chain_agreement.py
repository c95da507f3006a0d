#!/usr/bin/env python3
"""PyTorch float64 against the chain golden files (issue 52): one line per layer and batch.

    python3 tests/gpu/pytorch_chain_agreement.py --golden golden --table alexnet [--batch 1,32,128]

Reads <golden>/<table>/chain/manifest.json (written by `convstudy generate --chain`), checks
each file it uses against the manifest (shape, dtype, SHA-256), and recomputes the chain in
float64 with torch: conv2d (+ bias where the layer has one), relu, max_pool2d(3, 2) where the
manifest's layer table says, on the GPU when there is one (--device cpu to force the CPU).
Two comparisons per layer output, each as max|torch - golden| (abs) and that over
max|golden| (rel):
  chain: torch's own chain from the stored network input (errors carried layer to layer),
  layer: the layer alone from its stored input (the previous layer's golden output).
Exit 0 when every rel is within --limit (default 1e-5), 1 when one is not, 2 for a missing,
damaged or inconsistent golden set. The golden files are float32 roundings of a double
computation, so both comparisons should land near float's 2^-24 = 6e-8 of max|golden|.

--backend numpy does the same float64 computation with numpy (im2col and a matrix product),
for machines without torch; the committed log is torch's.
"""
import argparse
import hashlib
import json
import os
import sys

import numpy as np

EXIT_FAIL, EXIT_INPUT = 1, 2


class BadGolden(Exception):
    pass


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def load(chain_dir, entries, rel):
    """The float32 array of `rel`, checked against its manifest entry."""
    e = entries.get(rel)
    if e is None:
        raise BadGolden(f"{rel}: not listed in the manifest")
    path = os.path.join(chain_dir, rel)
    if not os.path.exists(path):
        raise BadGolden(f"{path}: missing")
    if sha256(path) != e["sha256"]:
        raise BadGolden(f"{path}: SHA-256 differs from the manifest's (damaged or changed)")
    a = np.load(path)
    if a.dtype != np.float32 or list(a.shape) != list(e["shape"]):
        raise BadGolden(f"{path}: dtype {a.dtype} shape {list(a.shape)}, the manifest records <f4 {e['shape']}")
    return a


class TorchOps:
    def __init__(self, device):
        import torch
        import torch.nn.functional as F
        self.torch, self.F = torch, F
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self.device = device
        name = torch.cuda.get_device_name(0) if device == "cuda" else "CPU"
        self.describe = f"torch {torch.__version__}, float64 on {device} ({name})"

    def tensor(self, a):
        return self.torch.from_numpy(np.ascontiguousarray(a, dtype=np.float64)).to(self.device)

    def numpy(self, t):
        return t.detach().cpu().numpy()

    def layer(self, x, layer, w, b):
        y = self.F.conv2d(x, w, b, stride=layer["stride"], padding=layer["pad"])
        if layer["relu"]:
            y = self.F.relu(y)
        if layer["pool"] == "max3x3s2":
            y = self.F.max_pool2d(y, kernel_size=3, stride=2)
        return y


class NumpyOps:
    describe = f"numpy {np.__version__}, float64 on the CPU (im2col and a matrix product)"

    def tensor(self, a):
        return np.asarray(a, dtype=np.float64)

    def numpy(self, t):
        return t

    def layer(self, x, layer, w, b):
        N, C, H, W = x.shape
        M, _, R, S = w.shape
        s, p = layer["stride"], layer["pad"]
        xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
        E, F = (H + 2 * p - R) // s + 1, (W + 2 * p - S) // s + 1
        cols = np.empty((N, C, R, S, E, F))
        for r in range(R):
            for t in range(S):
                cols[:, :, r, t] = xp[:, :, r:r + s * (E - 1) + 1:s, t:t + s * (F - 1) + 1:s]
        y = np.einsum("mk,nkq->nmq", w.reshape(M, -1), cols.reshape(N, C * R * S, E * F)).reshape(N, M, E, F)
        if b is not None:
            y = y + b[None, :, None, None]
        if layer["relu"]:
            y = np.maximum(y, 0)
        if layer["pool"] == "max3x3s2":
            PE, PF = (E - 3) // 2 + 1, (F - 3) // 2 + 1
            y = np.max(np.stack([y[:, :, a:a + 2 * (PE - 1) + 1:2, c:c + 2 * (PF - 1) + 1:2]
                                 for a in range(3) for c in range(3)]), axis=0)
        return y


def diff(got, golden):
    d = float(np.max(np.abs(got - golden.astype(np.float64)))) if golden.size else 0.0
    g = float(np.max(np.abs(golden))) if golden.size else 0.0
    if not np.all(np.isfinite(got)):
        d = float("inf")
    return d, (d / g if g > 0 else d)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--golden", default="golden", help="root directory of the golden files (default golden)")
    ap.add_argument("--table", default="alexnet", help="the table's directory name under --golden (default alexnet)")
    ap.add_argument("--batch", default="", help="comma-separated N (default: every batch the manifest lists)")
    ap.add_argument("--limit", type=float, default=1e-5, help="largest rel allowed (default 1e-5)")
    ap.add_argument("--backend", choices=("torch", "numpy"), default="torch")
    ap.add_argument("--device", default="auto", help="torch device: auto (cuda when available), cuda or cpu")
    args = ap.parse_args()

    chain_dir = os.path.join(args.golden, args.table, "chain")
    manifest_path = os.path.join(chain_dir, "manifest.json")
    try:
        with open(manifest_path) as f:
            m = json.load(f)
    except (OSError, ValueError) as e:
        print(f"error: {manifest_path}: {e}; make the files with: convstudy generate --chain --table <table> "
              f"--batch 1,32,128 --out {args.golden}", file=sys.stderr)
        return EXIT_INPUT
    if m.get("kind") != "chain":
        print(f"error: {manifest_path}: not a chain golden manifest", file=sys.stderr)
        return EXIT_INPUT
    layers = m["layer_table"]["layers"]
    entries = {e["path"]: e for e in m["files"]}
    listed = sorted({int(e["N"]) for e in m["files"]})
    batches = [int(b) for b in args.batch.split(",") if b] if args.batch else listed
    for n in batches:
        if n not in listed:
            print(f"error: {manifest_path}: no chain set at N={n} (listed: {listed})", file=sys.stderr)
            return EXIT_INPUT

    ops = TorchOps(args.device) if args.backend == "torch" else NumpyOps()
    tool = m.get("tool", {})
    print(f"{ops.describe}; golden {chain_dir} (convstudy {tool.get('version', '?')} "
          f"{tool.get('git_revision', '?')}, seed {m['generator']['seed']}); limit rel <= {args.limit:g}")
    print(f"{'N':>4} {'layer':<8} {'chain abs':>10} {'chain rel':>10} {'layer abs':>10} {'layer rel':>10}")
    worst, failed = 0.0, False
    for n in batches:
        try:
            x_golden = load(chain_dir, entries, f"n{n}/input.npy")
            x = ops.tensor(x_golden)
            prev_golden = x_golden
            for layer in layers:
                name = layer["name"]
                w = ops.tensor(load(chain_dir, entries, f"n{n}/{name}.weights.npy"))
                b = ops.tensor(load(chain_dir, entries, f"n{n}/{name}.bias.npy")) if layer["bias"] else None
                golden = load(chain_dir, entries, f"n{n}/{name}.output.npy")
                x = ops.layer(x, layer, w, b)
                alone = ops.layer(ops.tensor(prev_golden), layer, w, b)
                got_chain, got_layer = ops.numpy(x), ops.numpy(alone)
                if got_chain.shape != golden.shape:
                    raise BadGolden(f"{name} at N={n}: computed shape {got_chain.shape}, golden {golden.shape}")
                ca, cr = diff(got_chain, golden)
                la, lr = diff(got_layer, golden)
                bad = not (cr <= args.limit and lr <= args.limit)
                failed |= bad
                worst = max(worst, cr, lr)
                print(f"{n:>4} {name:<8} {ca:10.3e} {cr:10.3e} {la:10.3e} {lr:10.3e}{'  FAIL' if bad else ''}",
                      flush=True)
                prev_golden = golden
        except BadGolden as e:
            print(f"error: {e}", file=sys.stderr)
            return EXIT_INPUT
    print(f"{'FAIL' if failed else 'PASS'}: largest rel {worst:.3e} (limit {args.limit:g}) over "
          f"{len(layers)} layers at N={','.join(map(str, batches))}")
    return EXIT_FAIL if failed else 0


if __name__ == "__main__":
    sys.exit(main())
