#!/bin/sh
# Interesting (exit 0) while hir-run still fails with the planted bug's symptom: a LaunchKernel
# that no kernel was given for. Any other failure or a clean run is not interesting.
hir-run --device=cpu --timeout=20 "$1" 2>&1 | grep -q "LaunchKernel: needs a kernel"
