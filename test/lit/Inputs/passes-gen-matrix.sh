#!/bin/sh
# Generated inputs for every d in {1,2,4,8}, with and without bias, linear and matmul,
# through --stream-parallel with each backend: each output must re-parse and print to
# itself, have the shape of the corpus programs (one stream region with one exchange), and
# switch backends into the other lowering exactly. Usage: passes-gen-matrix.sh WORKDIR
set -u
dir=$1
mkdir -p "$dir"
fail=0
n=0
for d in 1 2 4 8; do
  for kind in ag-linear ag-matmul; do
    for bias in "" --no-bias; do
      [ "$kind" = ag-matmul ] && [ -n "$bias" ] && continue
      in="$dir/$kind-$d$bias.hir"
      hir-gen $kind --m $((d * 16)) --k 32 --n 24 --d $d $bias > "$in" || { echo "FAIL gen $kind d=$d $bias"; fail=1; continue; }
      for be in nccl cuda; do
        out="$dir/$kind-$d$bias-$be.hir"
        n=$((n + 1))
        if ! hir-opt --stream-parallel --backend=$be "$in" > "$out"; then echo "FAIL lower $out"; fail=1; continue; fi
        hir-opt "$out" | cmp -s - "$out" || { echo "FAIL round trip $out"; fail=1; }
        [ "$(grep -c '^  FOR streamIdx in istreamIdx[0-9]*{'$d'}:$' "$out")" = 2 ] || { echo "FAIL loops $out"; fail=1; }
        [ "$(grep -c 'IF Manual' "$out")" = 1 ] || { echo "FAIL exchange $out"; fail=1; }
        [ "$(grep -c 'backend=CUDA' "$out")" = $([ $be = cuda ] && echo 3 || echo 0) ] || { echo "FAIL backend $out"; fail=1; }
        grep -q '^Index definitions:$' "$out" || { echo "FAIL trailer $out"; fail=1; }
      done
      hir-opt --backend=cuda "$dir/$kind-$d$bias-nccl.hir" | cmp -s - "$dir/$kind-$d$bias-cuda.hir" || { echo "FAIL nccl->cuda $kind d=$d $bias"; fail=1; }
      hir-opt --backend=nccl "$dir/$kind-$d$bias-cuda.hir" | cmp -s - "$dir/$kind-$d$bias-nccl.hir" || { echo "FAIL cuda->nccl $kind d=$d $bias"; fail=1; }
    done
  done
done
echo "checked $n lowered programs"
exit $fail
