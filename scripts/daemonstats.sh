#!/bin/sh
# Prints a mounted daemon's counters (MNT/sys/kernel/debug/kfdemu/stats) twice, a second apart,
# one line each: scripts/daemonstats.sh MNT. The suite scripts add it to a timed-out case's report
# (after scripts/procdump.sh): which counters move while the case seems stuck. A read that takes
# over 3 s (a daemon that no longer answers) prints "no answer".
set -u
for i in 1 2; do
	printf 'daemon stats %s: %s\n' "$i" "$(timeout 3 cat "$1/sys/kernel/debug/kfdemu/stats" 2>/dev/null | tr '\n' ' ' || echo 'no answer')"
	[ "$i" = 2 ] || sleep 1
done
