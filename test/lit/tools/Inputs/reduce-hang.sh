#!/bin/sh
# An interestingness command that accepts its first three candidates and then hangs with a
# child of its own: it writes its pid and its child's to $1/pid and $1/child and waits.
n=$(($(cat "$1/count" 2>/dev/null || echo 0) + 1))
echo $n > "$1/count"
[ $n -le 3 ] && exit 0
sleep 60 &
echo $! > "$1/child"
echo $$ > "$1/pid.tmp" && mv "$1/pid.tmp" "$1/pid"
wait
