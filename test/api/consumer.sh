#!/bin/sh
# consumer.sh CONSUMER HIR_OPT PROGRAM PIPELINE TMPDIR — runs the example consumer and checks
# that the program it printed after PIPELINE is byte for byte what hir-opt prints, and that it
# reported its diagnostic and a correct one-rank matmul.
set -eu
consumer=$1 opt=$2 prog=$3 pipeline=$4 tmp=$5
"$consumer" "$prog" "$pipeline" >"$tmp/consumer.out" 2>"$tmp/consumer.err" || {
  cat "$tmp/consumer.err"; echo "consumer.sh: the consumer failed"; exit 1; }
"$opt" --pass-pipeline="$pipeline" "$prog" >"$tmp/hir-opt.out"
cmp "$tmp/consumer.out" "$tmp/hir-opt.out"
grep -q "expected diagnostic: bad.hir:2:" "$tmp/consumer.err"
grep -q "matmul on one rank: \[\[58, 64\], \[139, 154\]\] (correct)" "$tmp/consumer.err"
echo "consumer.sh: OK"
