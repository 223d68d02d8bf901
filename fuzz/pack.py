#!/usr/bin/env python3
"""pack.py: packs a faultline recording directory into one fuzzing input (fuzz/container.h).

    fuzz/pack.py DIR OUT [--max-faults N] [--max-allocs N] [--max-maps-lines N] [--max-snapshots N]
                         [--omit FILE]... [--cut FILE:BYTES]...

Up to four process directories of DIR (in name order) become slots 0..3. The recording is trimmed
so that a seed stays a few KB and still valid: N fault records spread evenly over the file (in file order), the
contexts of those faults, the stacks that the kept faults, contexts and allocation events name,
the first N allocation events, the first lines of the first maps snapshots; stats.json's fault
counts are made to agree with what was kept. --omit leaves a file out (stats.json: a killed
process; stacks: the records' stack ids become 0, as with --stack-depth 0); --cut FILE:BYTES cuts a file's last BYTES bytes off after trimming (a crash mid-write); --poke FILE:OFFSET:BYTE sets one byte (a corrupt
frame). Framed files (format 3: faults, contexts, evictions) are not trimmed: they, their contexts
and stacks are kept whole.
ranges.rap is never packed (the reader does not read it).
"""
import argparse
import json
import os
import struct
import sys

FILES = ["meta.json", "stats.json", "faults", "contexts", "stacks", "allocs", "maps", "ranges.rap"]
TAG_DIRNAME = 8
HEADER = 64                              # the fl_file_header this packer knows (header_size may be more)
STACK = struct.Struct("<IHHQ")           # 16 bytes + 8 per frame
# Offsets of the fields the packer reads or clears, by format version (inc/faultline/trace.h).
FAULT_FIELDS = {1: {"seq": ("<I", 20), "stack": ("<I", 24), "kind": ("<B", 28), "obj_stack": ("<I", 52)},
                2: {"seq": ("<Q", 16), "stack": ("<I", 28), "kind": ("<B", 32), "obj_stack": ("<I", 60)}}
CONTEXT_FIELDS = {1: {"seq": ("<I", 0), "stack": ("<I", 4)},
                  2: {"seq": ("<Q", 0), "stack": ("<I", 8)}}
ALLOC_FIELDS = {"stack": ("<I", 28)}
KIND_NAMES = {1: "first_touch", 2: "refault", 3: "soft", 4: "concurrent"}


def header(data):
    """(version, header_size, record_size) of a binary trace file."""
    version, _kind, hsize, rsize = struct.unpack_from("<4I", data, 8)
    return version, hsize, rsize


def records(data):
    """The header bytes, the complete records and the record size of a fixed-size-record file."""
    _version, hsize, rsize = header(data)
    body = data[hsize:]
    return data[:hsize], [body[i:i + rsize] for i in range(0, len(body) - rsize + 1, rsize)], rsize


def field(rec, spec):
    return struct.unpack_from(spec[0], rec, spec[1])[0]


def is_process_dir(name):
    parts = name.split(".")
    return 1 <= len(parts) <= 2 and all(p.isdigit() and not p.startswith("0") for p in parts)


def read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None


def is_framed(data):
    """A faults, contexts or evictions file of format 3: zstd frames, not fixed-size records."""
    return data is not None and len(data) >= HEADER and header(data)[0] >= 3


def trim_process(pdir, args):
    files = {name: read(os.path.join(pdir, name)) for name in FILES}
    faults = files["faults"]
    kept_faults, seqs, stack_ids, kinds = [], set(), set(), {}
    framed = is_framed(faults)
    if framed:
        # Framed files (format 3) are kept whole, and so are the contexts and stacks they name:
        # trimming them would mean decoding and re-encoding zstd frames. Record small runs.
        pass
    elif faults is not None and len(faults) >= HEADER:
        fields = FAULT_FIELDS[header(faults)[0]]
        head, recs, _ = records(faults)
        total = len(recs)
        n = min(total, args.max_faults)
        # Evenly spread over the file: first touches, refaults and later allocations alike.
        for i in (k * total // n for k in range(n)):
            rec = recs[i]
            kept_faults.append(rec)
            seqs.add(field(rec, fields["seq"]))
            if field(rec, fields["stack"]):
                stack_ids.add(field(rec, fields["stack"]))
            if len(rec) >= fields["obj_stack"][1] + 4 and field(rec, fields["obj_stack"]):
                stack_ids.add(field(rec, fields["obj_stack"]))   # the object's allocation site
            kind = field(rec, fields["kind"])
            kinds[kind] = kinds.get(kind, 0) + 1
        files["faults"] = head + b"".join(kept_faults)
    contexts = files["contexts"]
    if contexts is not None and len(contexts) >= HEADER and not is_framed(contexts):
        fields = CONTEXT_FIELDS[header(contexts)[0]]
        head, recs, _ = records(contexts)
        kept = [rec for rec in recs if field(rec, fields["seq"]) in seqs]
        stack_ids.update(field(rec, fields["stack"]) for rec in kept if field(rec, fields["stack"]))
        files["contexts"] = head + b"".join(kept)
    allocs = files["allocs"]
    if allocs is not None and len(allocs) >= HEADER:
        head, recs, _ = records(allocs)
        kept = recs[:args.max_allocs]
        stack_ids.update(field(rec, ALLOC_FIELDS["stack"]) for rec in kept if field(rec, ALLOC_FIELDS["stack"]))
        files["allocs"] = head + b"".join(kept)
    stacks = files["stacks"]
    if stacks is not None and len(stacks) >= HEADER and not framed:
        at, kept = header(stacks)[1], []
        while at + STACK.size <= len(stacks):
            stack_id, nframes, _flags, _hash = STACK.unpack_from(stacks, at)
            size = STACK.size + 8 * nframes
            if at + size > len(stacks):
                break
            if stack_id in stack_ids:
                kept.append(stacks[at:at + size])
            at += size
        files["stacks"] = stacks[:header(stacks)[1]] + b"".join(kept)
    maps = files["maps"]
    if maps is not None:
        out, snapshots, lines = [], 0, 0
        for line in maps.split(b"\n")[:-1]:
            if line.startswith(b"# maps "):
                snapshots += 1
                lines = 0
                if snapshots > args.max_snapshots:
                    break
                out.append(line)
            elif lines < args.max_maps_lines:
                lines += 1
                out.append(line)
        files["maps"] = b"".join(l + b"\n" for l in out)
    stats = files["stats.json"]
    if stats is not None and faults is not None and not framed:
        doc = json.loads(stats)
        total = len(kept_faults)
        doc["faults_total"] = total
        for kind, name in KIND_NAMES.items():
            if "faults_" + name in doc:
                doc["faults_" + name] = kinds.get(kind, 0)
        for key in ("records_written", "contexts_written", "stack_signals_sent"):
            if key in doc:
                doc[key] = total
        files["stats.json"] = (json.dumps(doc, indent=2) + "\n").encode()
    files["ranges.rap"] = None
    for name in args.omit:
        files[name] = None
    if "stacks" in args.omit:
        zero_stack_ids(files)
    for spec in args.poke:
        name, offset, value = spec.split(":")
        data = files.get(name)
        if data is not None and int(offset) < len(data):
            data = bytearray(data)
            data[int(offset)] = int(value, 0)
            files[name] = bytes(data)
    for spec in args.cut:
        name, count = spec.rsplit(":", 1)
        if files.get(name) is not None:
            files[name] = files[name][:max(0, len(files[name]) - int(count))]
    return files


def zero_stack_ids(files):
    """Without a stacks file, no record may name a stack (as with --stack-depth 0)."""
    for name in ("faults", "contexts", "allocs"):
        data = files.get(name)
        if data is None or len(data) < HEADER:
            continue
        version = header(data)[0]
        spec = {"faults": FAULT_FIELDS[version], "contexts": CONTEXT_FIELDS[version], "allocs": ALLOC_FIELDS}[name]["stack"]
        head, recs, _ = records(data)
        out = bytearray(head)
        for rec in recs:
            rec = bytearray(rec)
            rec[spec[1]:spec[1] + 4] = bytes(4)
            if name == "faults" and len(rec) >= FAULT_FIELDS[version]["obj_stack"][1] + 4:
                at = FAULT_FIELDS[version]["obj_stack"][1]
                rec[at:at + 4] = bytes(4)
            out.extend(rec)
        files[name] = bytes(out)


def sections(slot, name, files):
    out = bytearray()

    def put(tag, data):
        for start in range(0, max(len(data), 1), 65535):
            chunk = data[start:start + 65535]
            out.extend(struct.pack("<BH", tag, len(chunk)))
            out.extend(chunk)

    put(slot << 4 | TAG_DIRNAME, name.encode())
    for index, fname in enumerate(FILES):
        if files.get(fname) is not None:
            put(slot << 4 | index, files[fname])
    return bytes(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("out")
    ap.add_argument("--max-faults", type=int, default=12)
    ap.add_argument("--max-allocs", type=int, default=16)
    ap.add_argument("--max-maps-lines", type=int, default=6)
    ap.add_argument("--max-snapshots", type=int, default=2)
    ap.add_argument("--omit", action="append", default=[], choices=FILES)
    ap.add_argument("--cut", action="append", default=[])
    ap.add_argument("--poke", action="append", default=[])  # FILE:OFFSET:BYTE, after trimming
    args = ap.parse_args()
    names = sorted(n for n in os.listdir(args.dir)
                   if is_process_dir(n) and os.path.isdir(os.path.join(args.dir, n)))
    if not names:
        sys.exit("pack.py: %s: no process directory" % args.dir)
    blob = b"".join(sections(slot, name, trim_process(os.path.join(args.dir, name), args))
                    for slot, name in enumerate(names[:4]))
    with open(args.out, "wb") as f:
        f.write(blob)


if __name__ == "__main__":
    main()
