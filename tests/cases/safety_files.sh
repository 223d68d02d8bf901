#!/usr/bin/env bash
# tests/cases/safety_files.sh: faultline never writes through a link someone planted, never
# clobbers what it did not create, never runs a shell.
#   - static: no system(), popen(), wordexp() call and no "sh -c" / "/bin/sh" in tools/, runtime/,
#     shim/, lib/ (comments aside): nothing runs through a shell with text from a trace or from the
#     traced program;
#   - record -o: an existing non-empty directory is refused and left as it was; an existing file, or
#     a link to one, is refused; nothing is created through a dangling link; --force removes an old
#     process directory holding nothing but a recording's regular files, and keeps one with links
#     (never followed) or other files in it, a link named like a process directory (its target
#     untouched) and everything else;
#   - the runtime: links planted in a live process directory where it writes at exit (stats.json,
#     ranges.rap.tmp, ranges.rap) are not followed; in a fresh pid namespace, where the traced
#     program's pid is known (1), a planted DIR/1 (full of links) and DIR/1.1 (a link) are skipped
#     for a new DIR/1.2 (skipped without unshare);
#   - dump: meta.json a link to /etc/passwd, faults a link to /dev/zero, stats.json a link to a
#     directory: a clean error (exit 1), the targets unchanged, the recording unchanged;
#   - dump, report, ranges, visualize, mrc, diff: a FIFO in place of faults, contexts or meta.json:
#     exit 1 at once, never blocking (the streaming open included);
#   - export --force to a FIFO or a symbolic link: refused (exit 1), the FIFO still a FIFO, the
#     link and its target unchanged (a rename over them had replaced them by a plain file).
. "$(dirname "$0")/../lib.sh"

need_faultline
need_planted fill
cd "$ROOT" || fail "cd $ROOT"

# ---------------------------------------------------------------- static: no shell
"$PY" - tools runtime shim lib <<'EOF' || fail "a shell-running call in the sources (see above)"
import re, sys, pathlib
bad = 0
call = re.compile(r'(?<![\w.>])(system|popen|wordexp)\s*\(')
decl = re.compile(r'^\s*(FL_EXPORT\s+)?(extern\s+)?(int|FILE\s*\*)\s*(system|popen|wordexp)\s*\(')
shell = re.compile(r'"(/bin/|/usr/bin/)?(ba|da)?sh"\s*,\s*"-c"|"/bin/sh\b|"sh -c ')
def strip_comments(text):
    # Blank out comments, keep string literals and line numbers.
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith('/*', i):
            j = text.find('*/', i + 2); j = n if j < 0 else j + 2
            out.append(re.sub(r'[^\n]', ' ', text[i:j])); i = j
        elif text.startswith('//', i):
            j = text.find('\n', i); j = n if j < 0 else j
            out.append(' ' * (j - i)); i = j
        elif text[i] in '"\'':
            q, j = text[i], i + 1
            while j < n and text[j] != q:
                j += 2 if text[j] == '\\' else 1
            out.append(text[i:j + 1]); i = j + 1
        else:
            out.append(text[i]); i += 1
    return ''.join(out)
files = 0
for top in sys.argv[1:]:
    for path in sorted(pathlib.Path(top).glob('**/*.[ch]')):
        files += 1
        for no, line in enumerate(strip_comments(path.read_text(errors='replace')).split('\n'), 1):
            code_only = re.sub(r'"(\\.|[^"\\])*"', '""', line)
            if (call.search(code_only) and not decl.search(code_only)) or shell.search(line):
                print(f"{path}:{no}: {line.strip()}", file=sys.stderr)
                bad += 1
if bad or files == 0:
    sys.exit(1)
print(f"ok no system/popen/wordexp/sh -c in {files} files of {', '.join(sys.argv[1:])}")
EOF

# ---------------------------------------------------------------- helpers
# state DIR...: one line per file below DIR (type, size, mode, link count, target or checksum), to
# compare before and after.
state() {
	local d
	for d in "$@"; do
		find "$d" -printf '%p %y %s %m %n %l\n' | sort
		find "$d" -type f -exec sha256sum {} + | sort
	done
}
VICTIM=$WORK/victim
mkdir -p "$VICTIM/dir/sub"
echo "victim file" >"$VICTIM/file"
echo "victim inner" >"$VICTIM/dir/inner"
echo "victim deep" >"$VICTIM/dir/sub/deep"
state "$VICTIM" >"$WORK/victim.before"
victim_intact() { # WHAT
	state "$VICTIM" >"$WORK/victim.after"
	diff "$WORK/victim.before" "$WORK/victim.after" >&2 && return 0
	fail "$1: the victim files changed"
}
# rec DIR ARGS...: faultline record -q -L 4 -M 64 -o DIR ARGS... -- fill 1; sets RC, stderr in $WORK/rec.err.
rec() {
	local dir=$1; shift
	RC=0
	"$FAULTLINE" record -q -L 4 -M 64 -o "$dir" "$@" -- "$PLANTED/fill" 1 >"$WORK/rec.out" 2>"$WORK/rec.err" || RC=$?
}

# ---------------------------------------------------------------- record -o
mkdir -p "$WORK/nonempty"
echo "keep me" >"$WORK/nonempty/notes"
state "$WORK/nonempty" >"$WORK/ne.before"
rec "$WORK/nonempty"
[ "$RC" -eq 2 ] && grep -q "exists and is not empty" "$WORK/rec.err" || fail "-o non-empty dir: exit $RC: $(cat "$WORK/rec.err")"
state "$WORK/nonempty" | diff "$WORK/ne.before" - >&2 || fail "-o non-empty dir: its contents changed"
echo "ok -o an existing non-empty directory: refused (exit 2), left as it was"

echo "not a dir" >"$WORK/plainfile"
ln -s "$WORK/plainfile" "$WORK/link-to-file"
for o in plainfile link-to-file; do
	rec "$WORK/$o"
	[ "$RC" -eq 2 ] || [ "$RC" -eq 1 ] || fail "-o $o: exit $RC, want a refusal: $(cat "$WORK/rec.err")"
	grep -q "not a directory" "$WORK/rec.err" || fail "-o $o: no 'not a directory' reason: $(cat "$WORK/rec.err")"
done
[ "$(cat "$WORK/plainfile")" = "not a dir" ] && [ -L "$WORK/link-to-file" ] || fail "-o onto a file changed it"
echo "ok -o an existing file, or a link to one: refused, unchanged"

ln -s "$WORK/nowhere/rec" "$WORK/dangling"
rec "$WORK/dangling"
[ "$RC" -ne 0 ] || fail "-o a dangling link: exit 0"
[ -e "$WORK/nowhere" ] && fail "-o a dangling link: created $WORK/nowhere through the link"
[ -L "$WORK/dangling" ] || fail "-o a dangling link: the link was replaced"
echo "ok -o a dangling link: refused (exit $RC), nothing created through it"

mkdir -p "$WORK/linked-target"
ln -s "$WORK/linked-target" "$WORK/linked"
rec "$WORK/linked"
[ -L "$WORK/linked" ] || fail "-o a link to a directory: the link itself was replaced"
if [ "$RC" -eq 0 ]; then
	say "note: -o LINK to an empty directory records into the directory it names (fuzz/findings/README.md)"
	ls "$WORK/linked-target"/*/faults >/dev/null 2>&1 || fail "-o a link: exit 0 but no recording in its target"
else
	say "-o LINK to a directory: refused (exit $RC)"
fi
echo "ok -o a link to a directory: the link is never replaced"

# --force over planted links and trees.
F=$WORK/forced
mkdir -p "$F/4243" "$F/4244" "$F/4245"
ln -s "$VICTIM/dir" "$F/4242"                 # a link named like a process directory
ln -s "$VICTIM/file" "$F/4243/faults"         # links with a recording's names in a process directory
ln -s "$VICTIM/dir" "$F/4243/stacks"
echo old >"$F/4243/meta.json"
echo mine >"$F/4244/notes.txt" && echo old >"$F/4244/stats.json"   # a stats.json among one's own files
echo old >"$F/4245/meta.json" && echo old >"$F/4245/faults"   # an earlier recording's, all of it
echo "not a process dir" >"$F/notes.txt"
mkdir -p "$F/not-a-pid"
ln -s "$VICTIM/dir" "$F/not-a-pid/link"
rec "$F" --force
[ "$RC" -eq 0 ] || fail "record --force over planted links: exit $RC: $(cat "$WORK/rec.err")"
victim_intact "record --force"
[ -e "$F/4245" ] && fail "--force left an old process directory"
[ -L "$F/4243/faults" ] && [ -L "$F/4243/stacks" ] && [ -f "$F/4244/notes.txt" ] ||
	fail "--force removed a process directory holding links or files no recording writes"
[ -L "$F/4242" ] || fail "--force removed or replaced the link named 4242 (it should leave non-directories alone)"
[ -f "$F/notes.txt" ] && [ -L "$F/not-a-pid/link" ] || fail "--force removed something that is no process directory"
n=$(find "$F" -mindepth 2 -maxdepth 2 -name faults -type f | wc -l)
[ "$n" -ge 1 ] || fail "--force: no new recording"
echo "ok record --force: an old process directory removed; those holding links or other files, links and other entries kept; victim intact"

# ---------------------------------------------------------------- the runtime, live
mkfifo "$WORK/go"
L=$WORK/live
"$FAULTLINE" record -q -o "$L" -- /bin/bash -c 'read -r -t 60 line <"$1"' bash "$WORK/go" >"$WORK/live.out" 2>"$WORK/live.err" &
live_pid=$!
P=""
for _ in $(seq 1 "$(scaled 300)"); do
	P=$(find "$L" -mindepth 2 -maxdepth 2 -name meta.json -printf '%h\n' 2>/dev/null | head -n1)
	[ -n "$P" ] && break
	sleep 0.1
done
if [ -z "$P" ]; then
	echo go >"$WORK/go" &
	kill "$live_pid" 2>/dev/null
	wait "$live_pid" 2>/dev/null
	fail "the traced bash wrote no meta.json in 30 s: $(cat "$WORK/live.err")"
fi
ln -s "$VICTIM/file" "$P/stats.json"
ln -s "$VICTIM/dir/inner" "$P/ranges.rap.tmp"
ln -s "$VICTIM/dir/sub/deep" "$P/ranges.rap"
echo go >"$WORK/go"
RC=0
wait "$live_pid" || RC=$?
[ "$RC" -eq 0 ] || fail "traced bash: exit $RC: $(cat "$WORK/live.err")"
victim_intact "links planted in a live process directory"
# A planted name is either left alone (the write refused) or replaced by rename(2) with the
# runtime's own file; never written through.
for f in stats.json ranges.rap; do
	if [ -L "$P/$f" ]; then
		say "$f: the planted link left alone"
	elif [ -f "$P/$f" ]; then
		say "$f: the planted link replaced by the runtime's own file (rename)"
	else
		fail "$f: neither the planted link nor a file: $(ls -la "$P")"
	fi
done
[ -L "$P/ranges.rap.tmp" ] || [ ! -e "$P/ranges.rap.tmp" ] || fail "ranges.rap.tmp: the planted link was written through or replaced in place"
echo "ok runtime: links planted at stats.json, ranges.rap.tmp, ranges.rap of a live process not followed"

# The process directory itself, planted before the program starts: needs a known pid.
if command -v unshare >/dev/null && unshare -fp --mount-proc true 2>/dev/null; then
	N=$WORK/ns
	mkdir -p "$N/1"
	for f in meta.json stats.json faults contexts stacks allocs maps ranges.rap ranges.rap.tmp timeline; do
		ln -s "$VICTIM/file" "$N/1/$f"
	done
	ln -s "$VICTIM/dir" "$N/1.1"
	RC=0
	timeout "$(scaled 60)" unshare -fp --mount-proc env LD_PRELOAD="$BUILD/libfaultline.so" FAULTLINE_DIR="$N" \
		FAULTLINE_MAX_BYTES=$((64 * MIB)) FAULTLINE_LOCAL_BYTES=$((4 * MIB)) "$PLANTED/fill" 1 \
		>"$WORK/ns.out" 2>"$WORK/ns.err" || RC=$?
	[ "$RC" -eq 0 ] || fail "fill as pid 1 under the runtime: exit $RC: $(cat "$WORK/ns.err")"
	victim_intact "planted process directories"
	[ -L "$N/1.1" ] || fail "the planted link 1.1 was replaced"
	[ -f "$N/1.2/faults" ] && [ -f "$N/1.2/meta.json" ] || fail "no recording in the fresh $N/1.2: $(ls -la "$N")"
	mkdir -p "$WORK/ns-only"
	cp -r "$N/1.2" "$WORK/ns-only/1.2"
	"$FAULTLINE" dump "$WORK/ns-only" >/dev/null 2>"$WORK/ns-dump.err" || fail "dump of the fresh 1.2: $(cat "$WORK/ns-dump.err")"
	echo "ok runtime: planted DIR/1 (links inside) and DIR/1.1 (a link) skipped; recorded into a fresh DIR/1.2"
else
	say "unshare -fp unavailable: the planted process directory check is skipped"
fi

# ---------------------------------------------------------------- dump reads, never writes
R=$(find "$F" -mindepth 2 -maxdepth 2 -name faults -type f -printf '%h\n' | head -n1)   # the new recording's
[ -n "$R" ] || fail "no process directory in $F"
pname=$(basename "$R")
passwd_before=$(stat -c '%s %Y' /etc/passwd; sha256sum /etc/passwd)
# corrupt NAME FILE TARGET: a copy of the recording with FILE replaced by a link to TARGET.
corrupt() {
	local name=$1 file=$2 target=$3
	mkdir -p "$WORK/$name"
	cp -r "$R" "$WORK/$name/$pname"
	rm -f "$WORK/$name/$pname/$file"
	ln -s "$target" "$WORK/$name/$pname/$file"
}
check_dump_refuses() { # NAME FILE
	local name=$1 file=$2
	state "$WORK/$name" >"$WORK/$name.before"
	RC=0
	timeout "$(scaled 30)" "$FAULTLINE" dump "$WORK/$name" >"$WORK/$name.out" 2>"$WORK/$name.err" || RC=$?
	[ "$RC" -eq 1 ] || fail "dump with $file a link: exit $RC, want 1: $(head -c 300 "$WORK/$name.err")"
	grep -q "$pname/$file" "$WORK/$name.err" || fail "dump with $file a link: the error does not name it: $(cat "$WORK/$name.err")"
	[ -s "$WORK/$name.out" ] && fail "dump with $file a link wrote to stdout"
	state "$WORK/$name" | diff "$WORK/$name.before" - >&2 || fail "dump changed the recording"
	echo "ok dump, $file a link: exit 1: $(head -n1 "$WORK/$name.err")"
}
corrupt passwd meta.json /etc/passwd
check_dump_refuses passwd meta.json
[ "$(stat -c '%s %Y' /etc/passwd; sha256sum /etc/passwd)" = "$passwd_before" ] || fail "/etc/passwd changed"
corrupt zero faults /dev/zero
check_dump_refuses zero faults
corrupt statsdir stats.json "$VICTIM/dir"
check_dump_refuses statsdir stats.json
victim_intact "dump of recordings with planted links"

# each_verb_on_fifo WHAT CHECK: runs every verb that reads faults on $WORK/fifo (a copy of the
# recording with a FIFO planted), each within 10 s (a blocked open is the failure), then CHECK
# (a function) with the verb and its exit status; stderr in $WORK/fifo.err
each_verb_on_fifo() {
	local what=$1 check=$2 verb
	for verb in dump report ranges visualize mrc diff; do
		args=("$WORK/fifo")
		case $verb in
		visualize) args+=(-o "$WORK/fifo-viz") ;;
		diff) args+=("$WORK/fifo") ;;
		esac
		RC=0
		timeout 10 "$FAULTLINE" "$verb" "${args[@]}" >/dev/null 2>"$WORK/fifo.err" || RC=$?
		[ "$RC" -ne 124 ] || fail "$verb blocks on a FIFO at $what"
		"$check" "$verb" "$RC"
	done
}
fifo_copy() {  # fifo_copy: $WORK/fifo holding a copy of the recording's process directory
	rm -rf "$WORK/fifo"
	mkdir -p "$WORK/fifo"
	cp -r "$R" "$WORK/fifo/$pname"
}

# A FIFO in a recording (once fuzz finding 2: open(2) blocked forever) is refused at once, by the
# streaming open (which falls back to the holding reader) as by the holding one, in every verb that
# reads faults.
refused() {  # VERB RC
	[ "$2" -eq 1 ] && grep -q "$pname/$f" "$WORK/fifo.err" || fail "$1 with $f a FIFO: exit $2: $(cat "$WORK/fifo.err")"
}
for f in contexts faults meta.json; do
	fifo_copy
	rm -f "$WORK/fifo/$pname/$f"
	mkfifo "$WORK/fifo/$pname/$f"
	each_verb_on_fifo "$pname/$f" refused
	echo "ok dump, report, ranges, visualize, mrc, diff with $f a FIFO: exit 1 at once: $(head -n1 "$WORK/fifo.err")"
done
# the recording's own files DIR/exit and DIR/binaries, FIFOs: every verb goes on at once, with a
# warning naming the file (before, each blocked for ever opening it)
went_on() { :; }
for f in exit binaries; do
	fifo_copy
	mkfifo "$WORK/fifo/$f"
	each_verb_on_fifo "DIR/$f" went_on
	"$FAULTLINE" report "$WORK/fifo" >"$WORK/fifo.out" 2>&1 || fail "report with DIR/$f a FIFO exited $?: $(tail -3 "$WORK/fifo.out")"
	grep -q "fifo/$f: not a regular file" "$WORK/fifo.out" || fail "report with DIR/$f a FIFO does not say so: $(grep -i warning "$WORK/fifo.out")"
	echo "ok dump, report, ranges, visualize, mrc, diff with DIR/$f a FIFO: never blocked; report warns"
done

# export --force never replaces what is not a regular file: a FIFO, a link (with a file behind it).
mkfifo "$WORK/out.fifo"
echo "keep me" >"$WORK/link-target"
ln -sf "$WORK/link-target" "$WORK/out.link"
for out in "$WORK/out.fifo" "$WORK/out.link"; do
	for fmt in --sqlite --pprof; do
		RC=0
		timeout 30 "$FAULTLINE" export "$fmt" "$out" --force "$R" >/dev/null 2>"$WORK/export.err" || RC=$?
		[ "$RC" -eq 1 ] && grep -q "not a regular file" "$WORK/export.err" ||
			fail "export $fmt $out --force: exit $RC, want 1 and 'not a regular file': $(cat "$WORK/export.err")"
	done
done
[ -p "$WORK/out.fifo" ] || fail "export --force replaced a FIFO"
[ -L "$WORK/out.link" ] && [ "$(cat "$WORK/link-target")" = "keep me" ] || fail "export --force replaced a link or its target"
echo "ok export --force to a FIFO or a link: refused with exit 1, both unchanged"
# an output in a directory that does not exist: said of that directory, before any work
for fmt in --sqlite --pprof; do
	RC=0
	"$FAULTLINE" export "$fmt" "$WORK/no-such-dir/out" "$R" >/dev/null 2>"$WORK/export.err" || RC=$?
	[ "$RC" -eq 1 ] && grep -q "out: cannot write in .*no-such-dir/: No such file or directory" "$WORK/export.err" ||
		fail "export $fmt into a missing directory: exit $RC: $(cat "$WORK/export.err")"
done
echo "ok export into a missing directory: exit 1, the directory named"
