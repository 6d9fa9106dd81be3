#!/usr/bin/env python3
"""Write an sdpa program (2026 form) for the GPU suite's tier sdpa-cuda.

  sdpa-gen.py OUT.hir --n N --h H --l L --s S --e E [--ev EV] [--dtype float|__half|__bfloat]
              [--causal] [--bias DTYPE] [--mask] [--bcast] [--scale X] [--ranks D]

Outputs of the program: the attention and its float log-sum-exp, both checked by
`hir-run --check`. With --ranks D > 1 (and --n D) the program has communication after the
sdpa: q, k, v and the outputs are sharded over the ranks (a device axis in front, N = 1 on
each rank), and the
attention and its log-sum-exp are gathered by CUDA-IPC Allgathers (several ranks may share
one GPU), which read what the sdpa wrote. --bcast gives bias and mask extent 1 on N and H (broadcast).
"""
import argparse


def tensor(name, dt, dims, mesh=None, sharded=False):
    # sharded: a leading device axis of extent mesh, so that each rank holds dims with N = 1.
    # It is a logical axis of its own, the first: numbered first, as nvFuser numbers a
    # tensor's logical IterDomains in logical order (docs/language.md §12); a device axis
    # numbered after the others would be the last logical axis.
    ax = ['ideviceIdx.x%d{%d}' % (name * 10, mesh)] if sharded else []
    for i, d in enumerate(dims):
        ax.append('iS%d{%d}' % (name * 10 + i + (1 if sharded else 0), 1 if sharded and i == 0 else d))
    s = 'T%d_g_%s[%s]' % (name, dt, ', '.join(ax))
    if mesh:
        s += ' (DeviceMesh{%s})' % ' '.join(str(r) for r in range(mesh))
    return s


def sdpa(out, lse, seed, off, q, k, v, bias, mask, causal, scale, ind='  '):
    lines = [ind + out + ',', ind + lse + ',', ind + seed + ',', ind + off,
             ind + '   = sdpa(' + q + ',']
    pad = ind + '            '
    lines += [pad + k + ',', pad + v + ',']
    if bias:
        lines.append(pad + 'bias=' + bias + ',')
    if mask:
        lines.append(pad + 'mask=' + mask + ',')
    lines.append(pad + 'dropout_p = double(0),')
    lines.append(pad + 'is_causal=%s,' % ('true' if causal else 'false'))
    if scale is not None:
        lines.append(pad + 'scale=double(%s),' % scale)
    lines.append(ind + '  )')
    return lines


def main():
    p = argparse.ArgumentParser()
    p.add_argument('out')
    for a in ('n', 'h', 'l', 's', 'e'):
        p.add_argument('--' + a, type=int, required=True)
    p.add_argument('--ev', type=int)
    p.add_argument('--dtype', default='float')
    p.add_argument('--causal', action='store_true')
    p.add_argument('--bias')
    p.add_argument('--mask', action='store_true')
    p.add_argument('--bcast', action='store_true')
    p.add_argument('--scale')
    p.add_argument('--ranks', type=int, default=1)
    o = p.parse_args()
    N, H, L, S, E = o.n, o.h, o.l, o.s, o.e
    Ev = o.ev or E
    dt, D = o.dtype, o.ranks
    mesh = D if D > 1 else None
    ins, body, outs = [], [], []
    if D > 1 and N != D:
        p.error('--ranks D needs --n D (one N slice per rank)')
    sh = D > 1
    q = tensor(0, dt, [N, H, L, E], mesh, sharded=sh)
    k = tensor(1, dt, [N, H, S, E], mesh, sharded=sh)
    v = tensor(2, dt, [N, H, S, Ev], mesh, sharded=sh)
    ins += [q, k, v]
    bias = mask = None
    if o.bias:
        bias = tensor(7, o.bias, [1, 1, L, S] if o.bcast else [N, H, L, S], mesh,
                      sharded=sh and not o.bcast)
        ins.append(bias)
    if o.mask:
        mask = tensor(8, 'bool', [1, 1, L, S] if o.bcast else [N, H, L, S], mesh,
                      sharded=sh and not o.bcast)
        ins.append(mask)
    out = tensor(3, dt, [N, H, L, Ev], mesh, sharded=D > 1)
    lse = tensor(4, 'float', [N, H, L], mesh, sharded=D > 1)
    seed = 'T5_l_uint64_t[iS50{2}]' + (' (DeviceMesh{%s})' % ' '.join(map(str, range(D))) if mesh else '')
    off = 'T6_l_uint64_t[]' + (' (DeviceMesh{%s})' % ' '.join(map(str, range(D))) if mesh else '')
    body += sdpa(out, lse, seed, off, q, k, v, bias, mask, o.causal, o.scale)
    if D > 1:
        g3 = tensor(9, dt, [D, 1, H, L, Ev], mesh)
        gl = tensor(10, 'float', [D, 1, H, L], mesh)
        for g, n in ((g3, D * H * L * Ev), (gl, D * H * L)):
            body.append('  %s = ALLOCATE(buffer=%s, mem_type=global, size=%d, zero_init=false, '
                        'resets_to_zero=false)' % (g, g, n))
        body.append('  Communication 0 (type=Allgather, team=(%s), input=%s, output=%s, backend=CUDA)'
                    % (' '.join(map(str, range(D))), out, g3))
        body.append('  Wait Communication 0')
        body.append('  Communication 1 (type=Allgather, team=(%s), input=%s, output=%s, backend=CUDA)'
                    % (' '.join(map(str, range(D))), lse, gl))
        body.append('  Wait Communication 1')
        outs += [g3, gl]
    else:
        outs += [out, lse]
    text = '\n%%HostIrContainer { (%s) -> (%s) :\n%s\n} // %%HostIrContainer\n' % (
        ', '.join(ins), ', '.join(outs), '\n'.join(body))
    with open(o.out, 'w') as f:
        f.write(text)


if __name__ == '__main__':
    main()
