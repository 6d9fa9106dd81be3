#!/bin/sh
# Interesting only for the original (it has a Deallocate); candidates make it sleep past the
# reducer's --timeout, which must count as not interesting.
grep -q Deallocate "$1" && exit 0
sleep 30
