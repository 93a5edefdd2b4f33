#!/bin/sh
# Prints where the threads of a process group are: scripts/procdump.sh PGID
# For each process of the group (the kfdemu daemon and the command it runs, with their children):
# its threads' state, the system call each is in (/proc/TID/syscall's number, "running" when in
# user space) and kernel stack (/proc/TID/stack, readable by root only), threads
# alike in all of these counted together. The suite scripts print it for a case that reaches its
# time limit, before ending the case with SIGQUIT: a Go daemon dumps its goroutines then, a C
# client only dies, so this shows what the client was waiting for on a CI runner. With gdb
# installed it adds the user-space stacks of the processes other than kfdemu's.
set -u
pgid=$1
# The group's processes, the command's first (kfdemu and timeout, whose side the daemon's goroutine
# dump shows, last).
procs=$(ps -e -o pid= -o pgid= -o comm= | awk -v g="$pgid" '$2 == g { print ($3 == "kfdemu" || $3 == "timeout"), $1 }' | sort -n -s -k1,1 | cut -d' ' -f2)
for p in $procs; do
	[ -d "/proc/$p" ] || continue
	printf 'process %s: %s\n' "$p" "$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | cut -c1-160)"
	for t in /proc/"$p"/task/*; do
		[ -d "$t" ] || continue
		st=$(sed 's/^.*) //' "$t/stat" 2>/dev/null | cut -d' ' -f1)
		sc=$(cut -d' ' -f1 "$t/syscall" 2>/dev/null) # the number: arguments would keep alike threads apart
		printf '[%s] syscall=%s\001%s\n' "$st" "$sc" "$(sed 's/^\[<[0-9a-f]*>\] //; s/^/|      /' "$t/stack" 2>/dev/null | head -n 12 | tr '\n' '\001')"
	done | sort | uniq -c | sort -k1,1nr | sed 's/^ *\([0-9]*\) /  \1 x /' | tr '\001' '\n' | tr '|' ' '
	# A C client's user-space stacks, where gdb is installed (scripts/install-deps.sh installs it).
	case "$(cat "/proc/$p/comm" 2>/dev/null)" in kfdemu | timeout) continue ;; esac
	if command -v gdb >/dev/null 2>&1; then
		echo "  user-space stacks (gdb):"
		timeout 15 gdb -p "$p" -batch -nx -ex 'thread apply all bt 12' 2>/dev/null |
			grep -e '^Thread ' -e '^#' | sed 's/^/    /' | head -n 60
	fi
done
