#!/usr/bin/env python3
"""sdpa-torch.py WORK: the CPU reference of sdpa (hir-run --device=cpu) against PyTorch's
scaled_dot_product_attention on the GPU, for a few shapes, dtypes, scales and causal flags;
also its logsumexp against the one PyTorch's memory-efficient kernel returns. Prints one line per
case and `sdpa-torch: PASS|FAIL`; exit 1 on FAIL. Needs torch with CUDA and hir-run on PATH."""
import os, subprocess, sys
import numpy as np
import torch

work = sys.argv[1]
os.makedirs(work, exist_ok=True)
DT = {torch.float32: 'float', torch.float16: '__half', torch.bfloat16: '__bfloat'}


def tensor(num, dims, dt, mem='g'):
    return 'T%d_%s_%s[%s]' % (num, mem, dt, ', '.join('iS%d{%d}' % (num * 10 + i, x) for i, x in enumerate(dims)))


def program(N, H, L, S, E, Ev, dt, causal, scale):
    q, k, v = tensor(0, [N, H, L, E], dt), tensor(1, [N, H, S, E], dt), tensor(2, [N, H, S, Ev], dt)
    o, lse = tensor(3, [N, H, L, Ev], dt), tensor(4, [N, H, L], 'float')
    args = ''.join('              %s,\n' % a for a in [k, v])
    sc = '              scale=double(%r),\n' % scale if scale is not None else ''
    return ('\n%%HostIrContainer { (%s, %s, %s) -> (%s, %s) :\n  %s,\n  %s,\n  T5_l_uint64_t[iS50{2}],\n'
            '  T6_l_uint64_t[]\n     = sdpa(%s,\n%s              dropout_p = double(0),\n'
            '              is_causal=%s,\n%s    )\n} // %%HostIrContainer\n\n'
            % (q, k, v, o, lse, o, lse, q, args, 'true' if causal else 'false', sc))


def npy(t):
    return t.float().cpu().numpy() if t.dtype == torch.bfloat16 else t.cpu().numpy()


cases = [(1, 2, 16, 16, 32, 32, torch.float32, False, None), (2, 4, 64, 64, 64, 64, torch.float16, True, None),
         (1, 8, 128, 96, 64, 64, torch.float16, False, 0.1), (1, 4, 64, 64, 128, 128, torch.bfloat16, True, None),
         (2, 2, 33, 47, 16, 24, torch.float32, True, 0.5)]
ok = True
g = torch.Generator(device='cuda').manual_seed(0)
for i, (N, H, L, S, E, Ev, dt, causal, scale) in enumerate(cases):
    d = os.path.join(work, 'c%d' % i)
    os.makedirs(d + '/in', exist_ok=True)
    q = torch.randn(N, H, L, E, device='cuda', generator=g).to(dt)
    k = torch.randn(N, H, S, E, device='cuda', generator=g).to(dt)
    v = torch.randn(N, H, S, Ev, device='cuda', generator=g).to(dt)
    for n, t in enumerate([q, k, v]):
        np.save('%s/in/T%d.npy' % (d, n), npy(t))   # bfloat16 widened to float (runner-cpu.md, .npy)
    with open(d + '/p.hir', 'w') as f:
        f.write(program(N, H, L, S, E, Ev, DT[dt], causal, scale))
    r = subprocess.run(['hir-run', '--device=cpu', '--inputs=' + d + '/in', '--save-outputs=' + d + '/out', d + '/p.hir'],
                       capture_output=True, text=True)
    if r.returncode:
        print('case %d: hir-run failed: %s' % (i, r.stderr.strip()[-300:]))
        ok = False
        continue
    out = torch.from_numpy(np.load(d + '/out/T3.rank0.npy').astype(np.float32))
    lse = torch.from_numpy(np.load(d + '/out/T4.rank0.npy'))
    ref = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal,
                                                           scale=scale).cpu()
    ref_t = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale).float().cpu()
    err = (out - ref).abs().max().item()
    err_t = (out - ref_t).abs().max().item()
    tol = {torch.float32: 1e-4, torch.float16: 4e-3, torch.bfloat16: 3e-2}[dt]
    line = 'case %d %s N=%d H=%d L=%d S=%d E=%d Ev=%d causal=%s scale=%s: max|hir - torch(float)| %.2e, max|hir - torch(%s, cuda)| %.2e' % (
        i, DT[dt], N, H, L, S, E, Ev, causal, scale, err, DT[dt], err_t)
    good = err <= tol and err_t <= 2 * tol
    try:
        eo = torch.ops.aten._scaled_dot_product_efficient_attention(q.float(), k.float(), v.float(), None, True,
                                                                     is_causal=causal, scale=scale)
        tl = eo[1].cpu()
        line += ', torch lse shape %s, max|lse diff| %.2e' % (tuple(tl.shape), (tl[..., :L] - lse).abs().max().item())
        good = good and (tl[..., :L] - lse).abs().max().item() <= 1e-3
    except Exception as ex:  # recorded, not a failure: the kernel may not exist in this build
        line += ', efficient-attention lse unavailable (%s)' % type(ex).__name__
    print(line + (' ok' if good else ' MISMATCH'))
    ok = ok and good
print('sdpa-torch: %s (torch %s, %s)' % ('PASS' if ok else 'FAIL', torch.__version__, torch.cuda.get_device_name()))
sys.exit(0 if ok else 1)
