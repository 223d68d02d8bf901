#!/usr/bin/env bash
# tests/cases/install_man.sh: the manual pages against the command. For every verb, the options
# its --help lists, the options its page's OPTIONS section defines and the option table its parser
# walks (faultline __options VERB) are the same set, so none can drift from another. Every page
# (make builds them from man/*.scd) renders with `man -l` without a warning, and `faultline help
# VERB` opens the verb's page where man is, and prints its --help where man is not.
. "$(dirname "$0")/../lib.sh"
need_faultline

# options_of_help VERB: the option names of the lines that define an option in VERB's --help
options_of_help() {
	"$FAULTLINE" "$1" --help | grep -E '^ {2,8}(-[A-Za-z], )?--?[a-z]' |
		grep -oE '^ {2,8}(-[A-Za-z], )?--?[a-z][a-z0-9-]*' | grep -oE -- '--?[A-Za-z][a-z0-9-]*' | sort -u
}
# options_of_page VERB: the option names of the terms of the OPTIONS section of man/faultline-VERB.1.scd
options_of_page() {
	awk '/^# OPTIONS/ { on = 1; next } /^# / { on = 0 } on && /^\*-/' "$ROOT/man/faultline-$1.1.scd" |
		grep -oE -- '\*--?[A-Za-z][a-z0-9-]*\*' | tr -d '*' | sort -u
}
# options_of_table VERB: every name of the verb's parser table
options_of_table() {
	"$FAULTLINE" __options "$1" | awk '$1 != "operands" { if ($1 != "-") print $1; if ($2 != "-") print $2 }' | sort -u
}

verbs=$("$FAULTLINE" __options)
[ -n "$verbs" ] || fail "faultline __options lists no verb"
for verb in $verbs; do
	[ -f "$ROOT/man/faultline-$verb.1.scd" ] || fail "no manual page man/faultline-$verb.1.scd"
	help=$(options_of_help "$verb") page=$(options_of_page "$verb") table=$(options_of_table "$verb")
	[ -n "$help" ] || fail "$verb --help lists no option"
	[ "$help" = "$page" ] ||
		fail "$verb: --help and faultline-$verb(1) differ (< --help only, > page only): $(diff <(echo "$help") <(echo "$page") | grep '^[<>]' | tr '\n' ' ')"
	[ "$help" = "$table" ] ||
		fail "$verb: --help and its parser's table differ (< --help only, > table only): $(diff <(echo "$help") <(echo "$table") | grep '^[<>]' | tr '\n' ' ')"
	echo "ok   $verb: $(echo $help | wc -w) options, the same in --help, faultline-$verb(1) and the parser's table"
done

pages=("$BUILD"/man/man1/*.1 "$BUILD"/man/man5/*.5)
[ ${#pages[@]} -eq $(ls "$ROOT"/man/*.scd | wc -l) ] || fail "make built ${#pages[@]} pages for $(ls "$ROOT"/man/*.scd | wc -l) sources"
for verb in $verbs; do
	[ -f "$BUILD/man/man1/faultline-$verb.1" ] || fail "faultline-$verb.1 not built (run make)"
done
[ -f "$BUILD/man/man1/faultline.1" ] && [ -f "$BUILD/man/man5/faultline-recording.5" ] || fail "faultline.1 or faultline-recording.5 not built"

# help VERB without man (FAULTLINE_NO_MAN=1, and a PATH without man): the --help text
for how in "FAULTLINE_NO_MAN=1" "PATH=$WORK/empty"; do
	mkdir -p "$WORK/empty"
	out=$(env "$how" "$FAULTLINE" help report 2>&1) || fail "faultline help report ($how) failed: $out"
	[ "$out" = "$("$FAULTLINE" report --help)" ] || fail "faultline help report ($how) is not report --help: $(head -3 <<<"$out")"
done
echo "ok   faultline help report prints report --help without man"

command -v man >/dev/null 2>&1 || skip "man is not installed (run ./deps.sh --test): pages not rendered"
for page in "${pages[@]}"; do
	name=$(basename "$page")
	out=$(MANWIDTH=100 man --warnings -l "$page" 2>"$WORK/man.err") || fail "man -l $name failed: $(cat "$WORK/man.err")"
	[ ! -s "$WORK/man.err" ] || fail "man -l $name warns: $(head -5 "$WORK/man.err")"
	grep -q "^NAME" <<<"$out" && grep -q "^SEE ALSO" <<<"$out" || fail "man -l $name: no NAME or SEE ALSO section"
	echo "ok   man -l $name renders ($(wc -l <<<"$out") lines)"
done
out=$(MANPAGER=cat MANWIDTH=100 "$FAULTLINE" help record 2>&1) || fail "faultline help record failed: $out"
grep -q "faultline-record - run a command" <<<"$out" || fail "faultline help record did not show faultline-record(1): $(head -5 <<<"$out")"
echo "ok   faultline help record opens faultline-record(1)"
