#!/usr/bin/env bash
# tests/cases/install_completion.sh: the bash completion make generates (build/completion/faultline,
# from the parser's own tables) completes as a user types, driven through COMP_WORDS/COMP_CWORD
# (and COMP_LINE/COMP_POINT) as bash drives it: verbs (faultline re<TAB>: record report), every
# option of every verb's table, -L/-M size hints, --far kinds, --pmu events (comma lists),
# recording directories for the verbs that read one, the command after record's --.
. "$(dirname "$0")/../lib.sh"
need_faultline
need_cmd bash
COMPLETION=$BUILD/completion/faultline
[ -f "$COMPLETION" ] || fail "$COMPLETION not built (run make)"
mkdir -p "$WORK/here/faultline-prog-1/4242" "$WORK/here/faultline-prog-2/17" "$WORK/here/plain-dir" || fail mkdir
touch "$WORK/here/faultline-prog-1/4242/meta.json" "$WORK/here/faultline-prog-2/17/meta.json"
cd "$WORK/here" || fail "cd"

# complete LINE: the completions bash would offer at the end of LINE, one a line, sorted
complete_line() {
	bash -c '
		. "$1" || exit 1
		COMP_LINE=$2 COMP_POINT=${#2}
		read -ra COMP_WORDS <<<"$2"
		[[ $2 == *" " ]] && COMP_WORDS+=("")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		_faultline
		printf "%s\n" "${COMPREPLY[@]}"' _ "$COMPLETION" "$1" | sort -u
}
# expect LINE WORDS...: exactly these completions
expect() {
	local line=$1 got want; shift
	got=$(complete_line "$line")
	want=$(printf '%s\n' "$@" | sort -u)
	[ "$got" = "$want" ] || fail "completing '$line': got [$(echo $got)], expected [$(echo $want)]"
	echo "ok   '$line' -> $(echo $got)"
}
# expect_has LINE WORDS...: at least these completions
expect_has() {
	local line=$1 got w; shift
	got=$(complete_line "$line")
	for w in "$@"; do grep -qxF -- "$w" <<<"$got" || fail "completing '$line': no '$w' in [$(echo $got)]"; done
	echo "ok   '$line' offers $*"
}

expect "faultline re" record report
expect_has "faultline " $("$FAULTLINE" __options) help
expect "faultline help vi" visualize
for verb in $("$FAULTLINE" __options); do
	opts=$("$FAULTLINE" __options "$verb" | awk '$1 != "operands" { if ($1 != "-") print $1; if ($2 != "-") print $2 }')
	expect_has "faultline $verb -" $opts
done
expect_has "faultline sweep --" --auto --policy --far --pmu --mrc   # sweep passes record's options on
expect "faultline record --fa" --far --far-latency --far-bandwidth
expect "faultline record --far " mem file: memcached:
expect "faultline record --far=me" mem memcached:
expect "faultline record --far file:$WORK/her" "$WORK/here"
expect_has "faultline record -L " 64M 1G unlimited
expect_has "faultline record -M " 1G 4G
expect_has "faultline sweep -L 8M," 8M,16M 8M,64M
expect_has "faultline record --pmu " $("$FAULTLINE" __options --pmu-events) none
expect "faultline record --pmu task-clock,page" task-clock,page-faults
expect "faultline report " faultline-prog-1 faultline-prog-2
expect "faultline visualize faultline-prog-1 --kind all -o plain" plain-dir
expect "faultline diff faultline-prog-1 " faultline-prog-1 faultline-prog-2
expect_has "faultline record -L 64M -- " ls bash
# the values of the options that take a word from a fixed set
expect "faultline record --policy " clock fifo
expect "faultline mrc --policy " clock fifo lru
expect "faultline report --by " callsite function alloc thread process
expect "faultline diff --by " callsite function alloc
expect "faultline visualize --kind refault,s" refault,soft
expect "faultline ranges --kind refault,ac" refault,access
expect "faultline --version " 
expect "faultline report --format " table csv json
expect "faultline sweep --format " table csv
expect "faultline record --alloc-log " sampled full
expect "faultline report --time " wall virtual
# no word offered twice (sweep merges record's options; a builtin and a program of one name)
for line in "faultline sweep --" "faultline record -- ech"; do
	dups=$(bash -c '
		. "$1" || exit 1
		COMP_LINE=$2 COMP_POINT=${#2}
		read -ra COMP_WORDS <<<"$2"
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		_faultline
		printf "%s\n" "${COMPREPLY[@]}"' _ "$COMPLETION" "$line" | sort | uniq -d)
	[ -z "$dups" ] || fail "completing '$line' offers these twice: $(echo $dups)"
done
echo "ok   no completion offered twice"
[ "$(grep -c "compopt -o filenames" "$COMPLETION")" -ge 4 ] || fail "file and directory names completed without -o filenames: names with spaces unquoted"
echo "ok   -o filenames where names of files or directories are completed"
# a directory name with a space is one completion, not two words
mkdir -p "$WORK/here/my out"
expect "faultline visualize faultline-prog-1 -o my" "my out"
