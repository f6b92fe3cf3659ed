#!/usr/bin/env python3
"""gpu_layer.py: a one-layer transformer trained on one NVIDIA GPU with
PyTorch, measured and set against ulysim's prediction (run through
scripts/gpu-layer.sh, which checks for the GPU, PyTorch and the ulysim build).

For each sequence length (8K to 128K tokens by default) it trains a model of
one transformer layer with a model preset's shapes: the embedding, the layer
(RMSNorm, QKV projection, causal attention through
F.scaled_dot_product_attention on the flash backend, output projection,
RMSNorm, SwiGLU or GELU MLP), the final norm, the output layer, the
cross-entropy loss, backward, and Adam; fp32 parameters under bf16 autocast
(ulysim's --framework fsdp --zero 0 convention: 4 + 4 + 8 bytes per
parameter). It times steps with CUDA events, records the peak memory, runs
torch.profiler over a few steps and exports the Chrome trace. A size that
runs out of memory is a row with oom true.

Then it writes the runs file (runs.csv) and compares with ulysim:
`ulysim validate --runs runs.csv` and, per size,
`ulysim validate --torch-trace torch-SEQ.trace.json` with the same flags.
Everything goes under the output folder (traces/gpu/DATE-GPU by default).
--dry-run prints the plan of the run (sizes, flags, files) and writes
nothing; it needs neither a GPU nor PyTorch.

Exit status: 0 done; 2 no GPU, no PyTorch, or bad arguments (one line)."""

import argparse
import csv
import datetime
import json
import os
import re
import statistics
import subprocess
import sys
import time

# torch.cuda.get_device_name() words -> the cluster preset of that GPU
GPU_PRESETS = [("h200", "dgx-h200"), ("h100", "dgx-h100"), ("a100-sxm4-40gb", "dgx-a100-40g"),
               ("a100 40gb", "dgx-a100-40g"), ("a100", "dgx-a100-80g"), ("a800", "a800"), ("l40s", "pcie-l40s")]
MODEL_KEYS = ["layers", "hidden", "heads", "kv_heads", "head_dim", "ffn_hidden", "vocab", "swiglu",
              "tied_embeddings", "dropout"]
BUDGET_S = 420  # leave a minute of the 8 for ulysim and the files


def die(msg):
    print("gpu_layer.py: " + msg, file=sys.stderr)
    sys.exit(2)


def size(text):
    m = re.fullmatch(r"(\d+)([KkMm]?)", text.strip())
    if not m:
        die("--seqs %r: not a size (valid: 8K,16K,... or 8192)" % text)
    return int(m.group(1)) * {"": 1, "k": 1024, "m": 1 << 20}[m.group(2).lower()]


def ulysim_json(ulysim, *args):
    r = subprocess.run([ulysim, *args], capture_output=True, text=True)
    if r.returncode != 0:
        die("ulysim %s: %s" % (" ".join(args), r.stderr.strip()))
    return json.loads(r.stdout)


def flags(model_file, cluster, seq):
    """The plan flags of one row: one GPU, plain data parallel of one."""
    return ["--model", model_file, "--cluster", cluster, "--gpus", "1", "--seq", str(seq), "--strategy",
            "megatron-tp", "--tp", "1", "--batch", "1", "--recompute", "none", "--zero", "0", "--framework", "fsdp",
            "--dtype", "bf16", "--attn-kernel", "sdpa"]


def build(torch, shape):
    nn, F = torch.nn, torch.nn.functional
    h, a, k, d, f, V = (shape[x] for x in ("hidden", "heads", "kv_heads", "head_dim", "ffn_hidden", "vocab"))
    swiglu = shape["swiglu"]
    from torch.nn.attention import SDPBackend, sdpa_kernel

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.RMSNorm(h), nn.RMSNorm(h)
            self.qkv = nn.Linear(h, (a + 2 * k) * d, bias=False)
            self.out = nn.Linear(a * d, h, bias=False)
            self.up = nn.Linear(h, (2 if swiglu else 1) * f, bias=False)
            self.down = nn.Linear(f, h, bias=False)

        def forward(self, x):
            b, n, _ = x.shape
            q, kk, v = self.qkv(self.ln1(x)).split([a * d, k * d, k * d], dim=-1)
            q = q.view(b, n, a, d).transpose(1, 2)
            kk = kk.view(b, n, k, d).transpose(1, 2)
            v = v.view(b, n, k, d).transpose(1, 2)
            if k != a:  # GQA: the flash backend takes equal heads
                kk = kk.repeat_interleave(a // k, dim=1)
                v = v.repeat_interleave(a // k, dim=1)
            with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                o = F.scaled_dot_product_attention(q, kk, v, is_causal=True)
            x = x + self.out(o.transpose(1, 2).reshape(b, n, a * d))
            u = self.up(self.ln2(x))
            if swiglu:
                g, u = u.chunk(2, dim=-1)
                u = F.silu(g) * u
            else:
                u = F.gelu(u)
            return x + self.down(u)

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(V, h)
            self.layer = Layer()
            self.norm = nn.RMSNorm(h)
            self.head = nn.Linear(h, V, bias=False)
            if shape["tied_embeddings"]:
                self.head.weight = self.embed.weight

        def forward(self, tokens):
            logits = self.head(self.norm(self.layer(self.embed(tokens))))
            return F.cross_entropy(logits[:, :-1].reshape(-1, V).float(), tokens[:, 1:].reshape(-1))

    return Model().cuda()


def run_size(torch, shape, seq, steps, trace_path):
    """Step time (median of CUDA-event timings), peak reserved GiB, or None on OOM."""
    model = build(torch, shape)
    opt = torch.optim.Adam(model.parameters(), lr=1e-4, fused=True)
    tokens = torch.randint(0, shape["vocab"], (1, seq), device="cuda")

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(tokens)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    torch.cuda.reset_peak_memory_stats()
    for _ in range(2):  # warm-up: allocator, kernels chosen, Adam's states made
        step()
    torch.cuda.synchronize()
    times = []
    for _ in range(steps):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        step()
        e1.record()
        torch.cuda.synchronize()
        times.append(e0.elapsed_time(e1) / 1e3)
    mem_gib = torch.cuda.max_memory_reserved() / 2**30
    from torch.profiler import ProfilerActivity, profile, schedule
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 schedule=schedule(wait=0, warmup=1, active=3)) as prof:
        for _ in range(4):
            step()
            prof.step()
    torch.cuda.synchronize()
    prof.export_chrome_trace(trace_path)
    del model, opt, tokens
    torch.cuda.empty_cache()
    return statistics.median(times), mem_gib


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ulysim", required=True, help="the ulysim binary")
    p.add_argument("--model", default="llama3-8b", help="model preset whose layer shape is run [llama3-8b]")
    p.add_argument("--cluster", help="cluster preset of this GPU [from the GPU's name]")
    p.add_argument("--seqs", default="8K,16K,32K,64K,128K", help="sequence lengths [8K,16K,32K,64K,128K]")
    p.add_argument("--steps", type=int, default=5, help="timed steps per size [5]")
    p.add_argument("--out", help="output folder [traces/gpu/DATE-GPU]")
    p.add_argument("--dry-run", action="store_true", help="print what would run; needs no GPU and writes nothing")
    a = p.parse_args()
    t0 = time.time()
    seqs = [size(s) for s in a.seqs.split(",")]
    preset = ulysim_json(a.ulysim, "presets", "show", a.model)
    if "gpu" in preset:
        die("--model %s: a cluster preset (valid: a model preset, see ulysim presets)" % a.model)
    shape = {k: preset[k] for k in MODEL_KEYS}
    shape["layers"] = 1

    if a.dry_run:
        gpu, torch = "GPU", None
        cluster = a.cluster or "CLUSTER"
    else:
        try:
            import torch
        except ImportError:
            die("no PyTorch (import torch failed; valid: a Python with torch and CUDA)")
        if not torch.cuda.is_available():
            die("no NVIDIA GPU that PyTorch can use (torch.cuda.is_available() is False)")
        gpu = torch.cuda.get_device_name(0)
        cluster = a.cluster
        if not cluster:
            low = gpu.lower()
            cluster = next((c for word, c in GPU_PRESETS if word in low), None)
            if not cluster:
                die("GPU %r: no cluster preset known for it (valid: --cluster NAME, see ulysim presets)" % gpu)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    tag = datetime.date.today().isoformat() + "-" + re.sub(r"[^a-z0-9]+", "-", gpu.lower()).strip("-")
    out = a.out or os.path.join(root, "traces", "gpu", tag)
    model_file = "model-%s-1layer.json" % a.model
    if a.dry_run:
        print("would run %s (one layer of %s: %s) on this GPU at %s tokens, %d timed steps each" %
              (model_file, a.model, shape, ",".join(map(str, seqs)), a.steps))
        print("would write under %s: %s, runs.csv, torch-SEQ.trace.json, validate-*.txt" % (out, model_file))
        for s in seqs:
            print("  ulysim validate --torch-trace torch-%d.trace.json %s" % (s, " ".join(flags(model_file, cluster, s))))
        print("  ulysim validate --runs runs.csv")
        return 0

    os.makedirs(out, exist_ok=True)
    model = dict(name="%s-1layer" % a.model, description="one layer of %s with its embedding, output layer and "
                 "loss: the model gpu_layer.py trains" % a.model, source="the %s preset with layers 1" % a.model)
    model.update(shape)
    with open(os.path.join(out, model_file), "w") as f:
        json.dump(model, f, indent=2)
        f.write("\n")
    cols = ["label", "source", "model", "cluster", "gpus", "seq", "strategy", "tp", "batch", "recompute", "zero",
            "framework", "dtype", "attn-kernel", "step_s", "tokens_per_s", "mem_gib", "oom"]
    rows, done = [], []
    for s in seqs:
        if time.time() - t0 > BUDGET_S:
            print("gpu_layer.py: time budget spent; %d tokens and longer not run" % s, file=sys.stderr)
            break
        row = dict(label="%s-1layer-%d" % (a.model, s), source="scripts/gpu_layer.py on %s, torch %s" %
                   (gpu, torch.__version__), model=model_file, cluster=cluster, gpus=1, seq=s,
                   strategy="megatron-tp", tp=1, batch=1, recompute="none", zero=0, framework="fsdp", dtype="bf16")
        row["attn-kernel"] = "sdpa"
        try:
            step_s, mem = run_size(torch, shape, s, a.steps, os.path.join(out, "torch-%d.trace.json" % s))
            row.update(step_s="%.6g" % step_s, tokens_per_s="%.6g" % (s / step_s), mem_gib="%.4g" % mem, oom="false")
            done.append(s)
            print("%7d tokens: %.4f s per step, %.2f GiB peak reserved" % (s, step_s, mem), flush=True)
        except torch.cuda.OutOfMemoryError:
            row.update(oom="true")
            torch.cuda.empty_cache()
            print("%7d tokens: out of memory" % s, flush=True)
        rows.append(row)
    with open(os.path.join(out, "runs.csv"), "w", newline="") as f:
        f.write("# one transformer layer of %s trained on one %s (scripts/gpu_layer.py), %s; torch %s, CUDA %s\n" %
                (a.model, gpu, datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                 torch.__version__, torch.version.cuda))
        w = csv.DictWriter(f, fieldnames=cols, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)

    def record(name, args):
        r = subprocess.run([a.ulysim, *args], capture_output=True, text=True, cwd=out)
        with open(os.path.join(out, name), "w") as f:
            f.write("$ ulysim %s\n# exit %d\n%s%s" % (" ".join(args), r.returncode, r.stdout, r.stderr))
        print("ulysim %s: exit %d (%s)" % (args[0] + " " + args[1], r.returncode, name), flush=True)

    record("validate-runs.txt", ["validate", "--runs", "runs.csv"])
    for s in done:
        record("validate-torch-%d.txt" % s, ["validate", "--torch-trace", "torch-%d.trace.json" % s,
                                              *flags(model_file, cluster, s)])
    print("gpu_layer.py: wrote %s in %.0f s" % (out, time.time() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
