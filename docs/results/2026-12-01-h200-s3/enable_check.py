"""Issue 17 on the H200: a training loop through cudapool.torch.enable(), memory_stats() every 50
steps, compared with the library's CUDAPOOL_STATS file at exit. Run from the repository root:
    CUDAPOOL_TORCH_LIB=.bundle/lib/libcudapool_torch.so CUDAPOOL_STATS=$OUT/stats.json \
        PYTHONPATH=python python3 docs/results/2026-12-01-h200-s3/enable_check.py"""
import json, os, sys
import cudapool.torch as ct
ct.enable(variant="tls")
import torch
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 1024)).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
rows = []
for step in range(1, 201):
    x = torch.randn(256, 1024, device="cuda")
    loss = (model(x) - x).pow(2).mean()
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    if step % 50 == 0:
        torch.cuda.synchronize()
        s = ct.memory_stats()
        rows.append({"step": step, "loss": float(loss),
                     **{k: s[k] for k in ("allocated_bytes.all.current", "allocated_bytes.all.peak",
                                          "reserved_bytes.all.current", "reserved_bytes.all.peak", "num_ooms")}})
        print(json.dumps(rows[-1]))
print(ct.memory_summary())
final = ct.memory_stats()
print(json.dumps({"final_reserved": final["reserved_bytes.all.current"], "variant": final.get("cudapool.variant")}))
