#!/bin/sh
# Summarizes the Go goroutine dumps in a log (what a Go program prints when SIGQUIT ends it):
#   scripts/stacks.sh LOG [FRAMES]
# Goroutines with the same state and the same top FRAMES (default 5) functions outside the Go runtime
# (runtime, internal/... and syscall frames are left out, and the runtime's own goroutines) are counted
# together, most numerous first; the dump's "goroutine N [state, M minutes]:" wait times are
# dropped from the state so that they group. The suite scripts (kfdtest.sh, hip-tests.sh) end a
# case that outlives its time limit with SIGQUIT and print this for it: a hang on a CI runner, whose
# logs are gone, can still be read.
set -eu
log=$1 frames=${2:-5}
awk -v frames="$frames" '
function flush() {
	if (key != "") { n[key]++; if (!(key in first)) { first[key] = ++order } }
	key = ""
}
/^goroutine [0-9]+ .*\[.*\]:$/ {
	flush()
	st = $0
	sub(/^[^[]*\[/, "", st); sub(/\]:$/, "", st); sub(/, [0-9]+ minutes?/, "", st)
	sub(/, locked to thread/, "", st)
	key = "[" st "]"; depth = 0; ingo = ($2 != "0") # goroutine 0: an idle thread
	if (!ingo) key = ""
	next
}
ingo && /^$/ { flush(); ingo = 0; next }
ingo && /^[^\t]/ && !/^(runtime|internal\/[a-z]+|syscall)\./ && depth < frames {
	if (depth == 0 && /^created by runtime\./) { key = ""; ingo = 0; next } # a runtime goroutine
	f = $0; sub(/\([^()]*\)$/, "", f); sub(/ in goroutine [0-9]+$/, "", f)
	key = key "\001        " f; depth++
}
END {
	flush()
	for (k in n) printf "%d\t%d\t%s\n", n[k], first[k], k
}' "$log" | sort -t "$(printf '\t')" -k1,1nr -k2,2n | awk -F '\t' '{ printf "%4d x %s\n", $1, $3 }' | tr '\001' '\n'
