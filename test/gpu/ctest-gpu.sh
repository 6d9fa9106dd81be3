#!/usr/bin/env bash
# ctest entry for the GPU suite: runs test/gpu/suite.sh (every tier) and test/gpu/validate.sh
# when hir-run sees a CUDA GPU, otherwise reports the skip and why (exit 77 = skipped).
#   ctest-gpu.sh TOOLS_DIR
tools=$1
here=$(cd "$(dirname "$0")" && pwd)
prog=$(mktemp); trap 'rm -f "$prog"' EXIT
"$tools/hir-gen" linear --m 8 --k 8 --n 8 -o "$prog" || exit 1
if ! out=$("$tools/hir-run" --device=cuda "$prog" 2>&1); then
  if grep -q "no CUDA GPU is visible\|no CUDA backend" <<<"$out"; then
    echo "SKIPPED: the GPU suite needs a CUDA GPU (hir-run says: ${out##*: }); on the GPU machine run ctest -L gpu or test/gpu/suite.sh, see docs/runner.md"
    exit 77
  fi
  echo "$out"
  exit 1
fi
out=$(mktemp -d)
"$here/suite.sh" "$tools" "$out"; rc=$?
"$here/validate.sh" "$tools" "$out" || rc=1
exit $rc
