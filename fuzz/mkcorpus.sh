#!/usr/bin/env bash
# fuzz/mkcorpus.sh: (re)makes the seed corpus in tests/fuzz-corpus/ — small real recordings packed
# with fuzz/pack.py for fuzz_trace_reader, and hand-written seeds for the other harnesses. Needs a
# built tree (make) and userfaultfd access. Run it after a change of the trace format; the
# regression inputs (tests/fuzz-corpus/*/regress-*) are kept as they are.
#
#     fuzz/mkcorpus.sh            writes tests/fuzz-corpus/{trace_reader,record_args,cli,text}/seed-*
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
FL=$ROOT/build/faultline
P=$ROOT/build/tests
OUT=$ROOT/tests/fuzz-corpus
WORK=$(mktemp -d "${TMPDIR:-/tmp}/faultline-corpus.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
[ -x "$FL" ] && [ -x "$P/fill" ] || { echo "mkcorpus.sh: build first (make)" >&2; exit 1; }

mkdir -p "$OUT"/{trace_reader,record_args,cli,text}
# seed-v1-*, seed-v2-*: recordings of trace formats 1 and 2 (made by an older faultline), kept: the
# reader still reads them
find "$OUT" -name 'seed-*' ! -name 'seed-v1-*' ! -name 'seed-v2-*' -delete

rec() { # NAME RECORD-ARGS... -- CMD...
	local name=$1; shift
	"$FL" record -q -o "$WORK/$name" "$@" >/dev/null
}
pack() { # NAME RECORDING [pack.py options]
	local name=$1 dir=$2; shift 2
	python3 fuzz/pack.py "$WORK/$dir" "$OUT/trace_reader/seed-$name" "$@"
}

# Real recordings, each small: first touches and refaults of one heap array.
rec fill -L 4 -M 64 -- "$P/fill" 4
pack fill fill
pack fill-more fill --max-faults 40 --max-maps-lines 12
pack fill-nostats fill --omit stats.json
pack fill-cut fill --cut faults:7 --cut contexts:13 --cut stacks:5 --cut maps:3
pack fill-nocontexts fill --omit contexts --omit stacks --omit maps
pack fill-headers fill --max-faults 0 --max-allocs 0 --max-snapshots 0
# Format 3's framed files (faults, contexts: zstd frames, kept whole by pack.py): a short run, its
# last frame cut, a frame's record count, magic or zstd data broken (the header is 64 bytes, a
# frame header 16: nrecords at 68, the zstd frame from 80).
rec frames -L 1 -M 64 -- "$P/fill" 2
pack frames frames --max-maps-lines 12
pack frames-cut frames --cut faults:9 --cut contexts:3
pack frames-count frames --poke faults:69:0x7f --poke contexts:68:0
pack frames-magic frames --poke faults:64:0x00
pack frames-zstd frames --poke faults:90:0x5a --poke contexts:85:0xff
# Several processes (fork, and fork again); several threads; munmap and free events.
rec fork -L 1 -M 64 -- "$P/fork_verify" 2
pack fork fork --max-faults 5 --max-maps-lines 3
rec threads -L 2 -M 64 -c 2 -- "$P/threads" 2 1
pack threads threads --max-faults 16 --max-maps-lines 3
rec realloc -L 2 -M 64 -- "$P/realloc_storm" 40 2
pack realloc realloc --max-faults 16 --max-allocs 48 --max-maps-lines 3
rec churn -L 2 -M 64 -- "$P/mmap_churn" 2
pack churn churn --max-faults 10 --max-allocs 32 --max-maps-lines 3
rec sampled -L 2 -M 64 -s 4 --alloc-sample 2 --stack-depth 3 -- "$P/fill" 2
pack sampled sampled --max-faults 16

# The text parsers: meta.json, stats.json and a maps snapshot as the runtime writes them.
d=$(ls -d "$WORK"/fill/*/ | head -n1)
cp "$d/meta.json" "$OUT/text/seed-meta.json"
cp "$d/stats.json" "$OUT/text/seed-stats.json"
awk '/^# maps/ { n++; next } n == 1 && kept < 16 { print; kept++ }' "$d/maps" >"$OUT/text/seed-maps"
printf '{"a": [], "b": ["x", "\\u00e9\\ud83d\\ude00"], "c": {"d": [1, 2.5e3, null]}, "e": -9223372036854775808}' \
	>"$OUT/text/seed-json-shapes"
printf '7f0000000000-7f0000001000 rw-p 00000000 00:00 0 \n7f0000001000-7f0000002000 r-xp 00001000 fe:01 42   /tmp/a b\\012c (deleted)\n7f0000002000-7f0000003000 ---s 00000000 00:05 7 [anon:x]\n' \
	>"$OUT/text/seed-maps-edges"

# record's options: NUL-separated argument strings (argv[0] "record" is implied).
seed() { local name=$1; shift; printf '%s\0' "$@" >"$OUT/$name"; }
seed record_args/seed-basic -L 64M -M 1G -- ./prog --input data.txt
seed record_args/seed-forms -L64M --max=2G -c2 --policy fifo -o out-%p-%h --force -s 10 ls
seed record_args/seed-all --local 1.5G --max 2T --handlers 256 --policy=clock --output=o -q \
	--sample=1 --stack-depth 0 --pmu task-clock,page-faults --alloc-sample 1000 --far mem -- cmd a b
seed record_args/seed-help -h
seed record_args/seed-errors -L -- prog
seed record_args/seed-unlimited -L unlimited -M 64 prog
seed record_args/seed-far --far file:/tmp/far-store --keep-far kept --far-latency 10 --far-bandwidth 100 \
	--prefetch 8 -- prog
seed record_args/seed-far-memcached --far=memcached:127.0.0.1:11211,127.0.0.1:11212 prog

# cli: selector byte, quoting length byte, then the text.
cseed() { local name=$1 sel=$2 qlen=$3; shift 3; { printf "\\x$sel\\x$qlen"; printf '%s' "$*"; } >"$OUT/cli/$name"; }
cseed seed-size 02 40 64M
cseed seed-fraction 01 10 1.5GiB
cseed seed-max 41 ff 18446744073709551615
cseed seed-quote 80 20 "it's a 'test' with spaces"
cseed seed-bytes 00 08 4096B

du -sh "$OUT"
ls -l "$OUT"/*
