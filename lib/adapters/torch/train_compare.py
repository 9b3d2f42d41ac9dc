#!/usr/bin/env python3
"""Trains a small causal transformer with fixed seeds and deterministic kernels, once per allocator,
and compares the runs: the losses must be bitwise identical (the allocator decides only where
tensors live) and the step times are reported side by side. docs/pytorch.md.

  python3 train_compare.py --allocator=torch --steps=200 --out=torch.json
  python3 train_compare.py --allocator=cudapool --lib=libcudapool_torch.so --steps=200 --out=cudapool.json
  python3 train_compare.py --compare torch.json cudapool.json [torch2.json cudapool2.json ...] [--out=combined.json]

The compare mode exits 1 when the losses or the final parameters differ. With several pairs (each a
reference run and a candidate run, in that order on the command line; run them in alternating
order, A B B A, so that a process's own level does not fall on one allocator) the step-time ratio
is the median of the pairs' ratios: one process's median step moves 10-30% from the next on a
host-bound loop (docs/results/2026-12-06-h100-s37), so one pair cannot resolve a few percent.

Determinism: every kernel is one PyTorch runs deterministically under
torch.use_deterministic_algorithms(True) with CUBLAS_WORKSPACE_CONFIG=:4096:8 (set here before torch
is imported). The model avoids index-based kernels whose backward scatters with atomics: token
embedding is a one-hot matrix product and the loss a one-hot dot product with log_softmax, both plain
GEMM / elementwise / row-reduction work. TF32 is off. The parameters are initialised on the CPU and
the data are generated on the CPU from a seed, so the GPU sees the same inputs in both runs.
"""
import argparse
import ctypes
import hashlib
import json
import os
import statistics
import sys
import time

# cuBLAS needs this before its first handle for deterministic results (PyTorch's reproducibility notes).
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")


def add_run_arguments(p, steps, warmup):
    """What every run of a training loop under one allocator takes (ddp_compare.py too)."""
    p.add_argument("--allocator", choices=["torch", "cudapool"], help="which CUDA allocator trains")
    p.add_argument("--lib", default="libcudapool_torch.so", help="path of libcudapool_torch.so (cudapool runs)")
    p.add_argument("--steps", type=int, default=steps)
    p.add_argument("--warmup", type=int, default=warmup, help="steps left out of the median step time")
    p.add_argument("--seed", type=int, default=1234)


def check_run_arguments(p, args):
    """A run needs an allocator (or --compare) and more steps than warm-up steps."""
    if args.compare is None and args.allocator is None:
        p.error("give --allocator=torch|cudapool, or --compare A B")
    if args.compare is None and args.steps <= args.warmup:
        p.error("--steps must exceed --warmup")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_run_arguments(p, steps=200, warmup=20)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--seq", type=int, default=128)
    p.add_argument("--vocab", type=int, default=512)
    p.add_argument("--dim", type=int, default=256)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--out", help="result JSON (train), or the combined JSON (compare)")
    p.add_argument("--compare", nargs="+", metavar="A B",
                   help="compare result JSONs: pairs of a reference run and a candidate run")
    args = p.parse_args(argv)
    check_run_arguments(p, args)
    if args.compare is not None and len(args.compare) % 2 != 0:
        p.error("--compare takes pairs: a reference run and a candidate run each")
    return args


def install_allocator(args, torch):
    """Swaps in cudapool before anything touches CUDA (the swap is refused once the caching
    allocator is initialised)."""
    if args.allocator != "cudapool":
        return
    lib = os.path.abspath(args.lib)
    if not os.path.exists(lib):
        sys.exit(f"train_compare: no library at {lib}")
    alloc = torch.cuda.memory.CUDAPluggableAllocator(lib, "cudapool_torch_malloc", "cudapool_torch_free")
    torch.cuda.memory.change_current_allocator(alloc)


def make_deterministic(torch, seed):
    """Seeds PyTorch and selects deterministic kernels with TF32 off (the module docstring; workloads.py
    uses it too)."""
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True)
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False


def build_model(args, torch):
    nn = torch.nn
    F = torch.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1 = nn.LayerNorm(args.dim)
            self.qkv = nn.Linear(args.dim, 3 * args.dim)
            self.proj = nn.Linear(args.dim, args.dim)
            self.ln2 = nn.LayerNorm(args.dim)
            self.fc1 = nn.Linear(args.dim, 4 * args.dim)
            self.fc2 = nn.Linear(4 * args.dim, args.dim)

        def forward(self, x, mask):
            b, t, d = x.shape
            h = args.heads
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
            q, k, v = (z.reshape(b, t, h, d // h).transpose(1, 2) for z in (q, k, v))
            # Explicit attention (matmuls and a row softmax): deterministic in both directions.
            att = (q @ k.transpose(-2, -1)) * (1.0 / (d // h) ** 0.5)
            att = att.masked_fill(mask, float("-inf")).softmax(dim=-1)
            y = (att @ v).transpose(1, 2).reshape(b, t, d)
            x = x + self.proj(y)
            return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))

    class TinyLM(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Parameter(torch.randn(args.vocab, args.dim) * 0.02)
            self.pos = nn.Parameter(torch.randn(args.seq, args.dim) * 0.02)
            self.blocks = nn.ModuleList(Block() for _ in range(args.layers))
            self.ln = nn.LayerNorm(args.dim)
            self.head = nn.Linear(args.dim, args.vocab)

        def forward(self, one_hot_tokens, mask):
            x = one_hot_tokens @ self.tok + self.pos  # embedding as a GEMM: no scatter in backward
            for block in self.blocks:
                x = block(x, mask)
            return self.head(self.ln(x))

    return TinyLM()


def make_data(args, torch, batches):
    """Sequences that follow a fixed random permutation of the vocabulary, with 10% noise tokens:
    learnable, so the loss falls, and generated on the CPU from the seed."""
    g = torch.Generator().manual_seed(args.seed + 1)
    perm = torch.randperm(args.vocab, generator=g)
    data = []
    for _ in range(batches):
        seq = torch.empty(args.batch, args.seq + 1, dtype=torch.long)
        seq[:, 0] = torch.randint(args.vocab, (args.batch,), generator=g)
        for i in range(1, args.seq + 1):
            seq[:, i] = perm[seq[:, i - 1]]
        noise = torch.rand(args.batch, args.seq + 1, generator=g) < 0.1
        seq[noise] = torch.randint(args.vocab, (int(noise.sum()),), generator=g)
        data.append(seq)
    return data


def train(args):
    import torch  # after CUBLAS_WORKSPACE_CONFIG

    install_allocator(args, torch)
    if not torch.cuda.is_available():
        sys.exit("train_compare: CUDA is not available")
    make_deterministic(torch, args.seed)

    dev = torch.device("cuda")
    model = build_model(args, torch)  # initialised on the CPU from the seed
    model.to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    data = make_data(args, torch, batches=16)
    vocab_ids = torch.arange(args.vocab, device=dev)
    mask = torch.triu(torch.ones(args.seq, args.seq, dtype=torch.bool, device=dev), diagonal=1)

    losses, step_ms = [], []
    for step in range(args.steps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        seq = data[step % len(data)].to(dev, non_blocking=False)
        inputs, targets = seq[:, :-1], seq[:, 1:]
        logits = model((inputs.unsqueeze(-1) == vocab_ids).float(), mask)
        target_one_hot = (targets.unsqueeze(-1) == vocab_ids).float()
        loss = -(logits.log_softmax(dim=-1) * target_one_hot).sum(dim=-1).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        torch.cuda.synchronize()
        step_ms.append((time.perf_counter() - t0) * 1e3)
        losses.append(loss.item())

    digest = hashlib.sha256()
    for name, p in sorted(model.state_dict().items()):
        digest.update(name.encode())
        host = p.detach().cpu().contiguous()  # raw bytes without numpy (not every torch install has it)
        digest.update(ctypes.string_at(host.data_ptr(), host.numel() * host.element_size()))

    # What the allocator answers at the edges PyTorch reaches: an empty tensor (size 0) and a
    # request no device can satisfy (PyTorch's error for the allocator's NULL).
    probe = {}
    try:
        empty = torch.empty(0, device=dev)
        probe["empty_tensor"] = f"ok, data_ptr {empty.data_ptr():#x}"
        del empty
    except Exception as e:  # noqa: BLE001
        probe["empty_tensor"] = f"{type(e).__qualname__}: {str(e).splitlines()[0][:200] if str(e) else ''}"
    try:
        torch.cuda.memory_stats(dev)
        probe["memory_stats"] = "ok"
    except Exception as e:  # noqa: BLE001
        probe["memory_stats"] = f"{type(e).__qualname__}: {str(e).splitlines()[0][:120] if str(e) else ''}"
    torch.cuda.empty_cache()
    try:
        torch.empty(1 << 50, dtype=torch.uint8, device=dev)
        probe["oom_exception"] = None
    except Exception as e:  # noqa: BLE001 - the type is what is recorded
        probe["oom_exception"] = type(e).__module__ + "." + type(e).__qualname__
        probe["oom_message_head"] = str(e).splitlines()[0][:200] if str(e) else ""

    timed = step_ms[args.warmup:]
    result = {
        "allocator": args.allocator,
        "lib": os.path.abspath(args.lib) if args.allocator == "cudapool" else None,
        "cudapool_variant": os.environ.get("CUDAPOOL_VARIANT", "lockfree (default)") if args.allocator == "cudapool" else None,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "device": torch.cuda.get_device_name(dev),
        "config": {k: getattr(args, k) for k in ("steps", "warmup", "seed", "batch", "seq", "vocab", "dim", "heads", "layers")},
        "losses": losses,
        "params_sha256": digest.hexdigest(),
        "step_ms": step_ms,
        "median_step_ms": statistics.median(timed),
        "mean_step_ms": statistics.fmean(timed),
        "probe": probe,
    }
    if args.allocator == "torch":
        result["max_memory_allocated"] = torch.cuda.max_memory_allocated(dev)
        result["max_memory_reserved"] = torch.cuda.max_memory_reserved(dev)
    text = json.dumps(result, indent=1)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    print(f"{args.allocator}: {args.steps} steps, loss {losses[0]:.4f} -> {losses[-1]:.4f}, "
          f"median step {result['median_step_ms']:.3f} ms, params {result['params_sha256'][:16]}, probe {probe}")
    return 0


def compare_pair(a, b):
    """The problems of one pair of runs (a the reference): configs, step counts, losses, parameters."""
    problems = []
    if a["config"] != b["config"]:
        problems.append(f"configs differ: {a['config']} vs {b['config']}")
    # JSON keeps a float64 exactly (repr round-trips), and each loss is a float32 value: == is bitwise.
    first_diff = next((i for i, (x, y) in enumerate(zip(a["losses"], b["losses"])) if x != y), None)
    if len(a["losses"]) != len(b["losses"]):
        problems.append(f"step counts differ: {len(a['losses'])} vs {len(b['losses'])}")
    if first_diff is not None:
        worst = max(abs(x - y) for x, y in zip(a["losses"], b["losses"]))
        problems.append(f"losses differ from step {first_diff} ({a['losses'][first_diff]!r} vs "
                        f"{b['losses'][first_diff]!r}); largest difference {worst:.3e}")
    if a["params_sha256"] != b["params_sha256"]:
        problems.append("final parameters differ")
    return problems


def compare(args):
    runs = []
    for path in args.compare:
        with open(path) as f:
            runs.append(json.load(f))
    pairs = [(runs[i], runs[i + 1]) for i in range(0, len(runs), 2)]
    problems, ratios = [], []
    for n, (a, b) in enumerate(pairs, 1):
        prefix = f"pair {n}: " if len(pairs) > 1 else ""
        problems += [prefix + p for p in compare_pair(a, b)]
        # Every pair against the first: the same loop on both sides.
        if n > 1:
            problems += [prefix + "not the first pair's loop: " + p for p in compare_pair(pairs[0][0], a)]
        ratios.append(b["median_step_ms"] / a["median_step_ms"])
    a, b = pairs[0]
    name_a, name_b = a["allocator"], b["allocator"]
    print(f"{'':28}{name_a:>14}{name_b:>14}")
    print(f"{'device':28}{a['device'][:13]:>14}{b['device'][:13]:>14}")
    for n, (pa, pb) in enumerate(pairs, 1):
        label = "median step (ms)" + (f", pair {n}" if len(pairs) > 1 else "")
        print(f"{label:28}{pa['median_step_ms']:>14.3f}{pb['median_step_ms']:>14.3f}")
    print(f"{'mean step (ms)':28}{a['mean_step_ms']:>14.3f}{b['mean_step_ms']:>14.3f}")
    print(f"{'first / last loss':28}{a['losses'][0]:>14.5f}{b['losses'][0]:>14.5f}")
    print(f"{'':28}{a['losses'][-1]:>14.5f}{b['losses'][-1]:>14.5f}")
    print(f"{'params sha256':28}{a['params_sha256'][:12]:>14}{b['params_sha256'][:12]:>14}")
    print(f"{'oom probe':28}{str(a['probe'].get('oom_exception'))[-13:]:>14}{str(b['probe'].get('oom_exception'))[-13:]:>14}")
    ratio = statistics.median(ratios)
    each = f" (pairs: {', '.join(f'{r:.3f}' for r in ratios)})" if len(ratios) > 1 else ""
    print(f"{name_b} / {name_a} median step time: {ratio:.3f}{each}")
    verdict = "identical" if not problems else "MISMATCH"
    print(f"losses and final parameters over {len(a['losses'])} steps: {verdict}")
    for p in problems:
        print("  " + p)
    if args.out:
        combined = {"verdict": verdict, "problems": problems, "median_ratio": ratio, "pair_ratios": ratios,
                    "pairs": [{"median_step_ms": {name_a: pa["median_step_ms"], name_b: pb["median_step_ms"]},
                               "ratio": r} for (pa, pb), r in zip(pairs, ratios)],
                    "runs": {name_a: a, name_b: b}}
        stats_path = os.environ.get("CUDAPOOL_STATS")
        if stats_path and os.path.exists(stats_path):
            with open(stats_path) as f:
                combined["cudapool_stats"] = json.load(f)
        with open(args.out, "w") as f:
            json.dump(combined, f, indent=1)
            f.write("\n")
    return 0 if not problems else 1


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    return compare(args) if args.compare else train(args)


if __name__ == "__main__":
    sys.exit(main())
