#!/bin/sh
# Interesting while hir-opt accepts the candidate and still prints a matmul.
hir-opt "$1" | grep -q "= matmul("
