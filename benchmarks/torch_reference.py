#!/usr/bin/env python3
"""Reference training-step throughput of a plain PyTorch decoder-only Transformer.

A yardstick for the project's own training benchmark: the same model shape,
batch and optimizer, written the way most people would write it in PyTorch
(pre-LayerNorm blocks, GELU MLP of width 4d, learned positions, tied
embeddings, AdamW, float32, causal scaled-dot-product attention).

It prints one JSON line:
  {"impl": "torch", "tokens_per_s": ..., "step_ms": ..., "flops_per_token": ..., ...}

Install torch first, the CPU build: pip install torch==2.13.0 (an unpinned torch pulls a CUDA build of several GB)
Example:
  python benchmarks/torch_reference.py --depth 6 --width 256 --heads 4 --seq 256 --batch 16 --steps 20
"""
import argparse
import json
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.h = h
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc = nn.Linear(d, 4 * d)
        self.out = nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.h, d // self.h).transpose(1, 2) for z in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class LM(nn.Module):
    def __init__(self, vocab, seq, depth, width, heads):
        super().__init__()
        self.tok = nn.Embedding(vocab, width)
        self.pos = nn.Embedding(seq, width)
        self.blocks = nn.ModuleList(Block(width, heads) for _ in range(depth))
        self.ln = nn.LayerNorm(width)

    def forward(self, idx):
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
        for blk in self.blocks:
            x = blk(x)
        return self.ln(x) @ self.tok.weight.T


def flops_per_token(vocab, seq, depth, width):
    """Training FLOPs per token: 6 x (non-embedding + unembedding parameters)
    plus the attention score and value products, 12 * L * T * d (fwd + bwd)."""
    non_embedding = 12 * depth * width * width
    return 6 * (non_embedding + vocab * width) + 12 * depth * seq * width


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--vocab", type=int, default=1000)
    p.add_argument("--seq", type=int, default=256)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--depth", type=int, default=6)
    p.add_argument("--width", type=int, default=256)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    a = p.parse_args()
    torch.manual_seed(0)
    model = LM(a.vocab, a.seq, a.depth, a.width, a.heads)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.1)
    data = torch.randint(0, a.vocab, (a.batch, a.seq + 1))
    x, y = data[:, :-1], data[:, 1:]

    def step():
        logits = model(x)
        loss = F.cross_entropy(logits.reshape(-1, a.vocab), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss.item()

    for _ in range(a.warmup):
        step()
    t0 = time.perf_counter()
    for _ in range(a.steps):
        step()
    dt = (time.perf_counter() - t0) / a.steps
    tokens = a.batch * a.seq
    fpt = flops_per_token(a.vocab, a.seq, a.depth, a.width)
    print(json.dumps({
        "impl": "torch", "torch": torch.__version__, "threads": torch.get_num_threads(),
        "depth": a.depth, "width": a.width, "heads": a.heads, "seq": a.seq, "batch": a.batch,
        "step_ms": round(dt * 1e3, 2), "tokens_per_s": round(tokens / dt, 1),
        "flops_per_token": fpt, "gflops_per_s": round(fpt * tokens / dt / 1e9, 2),
    }))


if __name__ == "__main__":
    main()
