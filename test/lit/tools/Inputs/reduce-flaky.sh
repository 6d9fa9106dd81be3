#!/bin/sh
# An interestingness command that fails once mid-reduction: its second run exits 127 (as a
# command that is not found does), every other run exits 0. $1 counts the runs; $2 is the
# candidate.
n=$(($(cat "$1" 2>/dev/null || echo 0) + 1))
echo $n > "$1"
[ $n = 2 ] && exit 127
exit 0
