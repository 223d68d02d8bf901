"""tests/py/trace_frames.py: the tests' reader of format 3's framed files (faults, contexts,
evictions: inc/faultline/trace.h, "Framed files"), so the Python checks read the records as they
read format 2's: read(path) returns the file's bytes with its frames decoded into fixed-size
records after the 64-byte header (header_size 64, record_size the struct's size); other files,
and files of formats 1 and 2, come back as they are. zstd through libzstd (ctypes), the codec as
lib/record_codec.c. count(path) gives the records from the frame headers alone."""
import ctypes
import ctypes.util
import struct

HEADER = 64
FRAME = struct.Struct("<4I")
FRAME_MAGIC = 0x52464C46
KIND_FAULTS, KIND_CONTEXTS, KIND_EVICTIONS = 1, 4, 8
SIZES = {KIND_FAULTS: 80, KIND_CONTEXTS: 56, KIND_EVICTIONS: 24}

_zstd = None


def _lib():
    global _zstd
    if _zstd is None:
        _zstd = ctypes.CDLL(ctypes.util.find_library("zstd") or "libzstd.so.1")
        _zstd.ZSTD_decompress.restype = ctypes.c_size_t
        _zstd.ZSTD_decompress.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t]
        _zstd.ZSTD_isError.restype = ctypes.c_uint
        _zstd.ZSTD_isError.argtypes = [ctypes.c_size_t]
    return _zstd


def _decompress(src, size):
    out = ctypes.create_string_buffer(size)
    n = _lib().ZSTD_decompress(out, size, src, len(src))
    if _lib().ZSTD_isError(n) or n != size:
        raise ValueError("corrupt zstd frame")
    return out.raw[:n]


def is_framed(data):
    if len(data) < HEADER:
        return False
    version, kind = struct.unpack_from("<II", data, 8)
    return version >= 3 and kind in SIZES


def frames(data):
    """(offset, nrecords, compressed bytes, encoded size) of each whole frame."""
    hsize = struct.unpack_from("<I", data, 16)[0]
    off = hsize
    while off + FRAME.size <= len(data):
        magic, n, csize, esize = FRAME.unpack_from(data, off)
        if magic != FRAME_MAGIC or off + FRAME.size + csize > len(data):
            break
        yield off, n, data[off + FRAME.size:off + FRAME.size + csize], esize
        off += FRAME.size + csize


def count(path):
    data = open(path, "rb").read()
    if not is_framed(data):
        hsize, rsize = struct.unpack_from("<II", data, 16)
        return (len(data) - hsize) // rsize if rsize else 0
    return sum(n for _, n, _, _ in frames(data))


class _Reader:
    def __init__(self, buf):
        self.buf, self.pos = buf, 0

    def varint(self):
        v = shift = 0
        while True:
            b = self.buf[self.pos]
            self.pos += 1
            v |= (b & 0x7F) << shift
            if not b & 0x80:
                return v
            shift += 7

    def delta(self, prev, bits=64):
        z = self.varint()
        d = (z >> 1) ^ -(z & 1)
        return (prev + d) & ((1 << bits) - 1)

    def byte(self):
        self.pos += 1
        return self.buf[self.pos - 1]


def _decode_frame(kind, enc, n, version):
    r, out = _Reader(enc), []
    if kind == KIND_FAULTS:
        p = [0] * 14
        for _ in range(n):
            t, a, s = r.delta(p[0]), r.delta(p[1]), r.delta(p[2])
            tid, st = r.delta(p[3], 32), r.delta(p[4], 32)
            k, fl, h = r.byte(), r.byte(), r.byte()
            oa, osz, oid, ost = r.delta(p[8]), r.delta(p[9]), r.delta(p[10], 32), r.delta(p[11], 32)
            tt, svc = r.delta(p[12]), r.varint()
            wait = 0
            if version >= 4 and k & 0x80:   # from version 4, a kind byte with 0x80: wait_ns follows
                wait, k = r.varint(), k & 0x7f
            p = [t, a, s, tid, st, k, fl, h, oa, osz, oid, ost, tt, svc]
            out.append(struct.pack("<QQQIIBBBBIQQIIQII", t, a, s, tid, st, k, fl, h, 0, 0, oa, osz, oid, ost, tt, svc, wait))
    elif kind == KIND_CONTEXTS:
        seq = sid = tid = 0
        pmu = [0, 0, 0, 0]
        for _ in range(n):
            seq, sid, tid = r.delta(seq), r.delta(sid, 32), r.delta(tid, 32)
            npmu = r.varint()
            vals = [0, 0, 0, 0]
            for i in range(npmu):
                pmu[i] = vals[i] = r.delta(pmu[i])
            out.append(struct.pack("<QIIII4Q", seq, sid, tid, npmu, 0, *vals))
    else:
        t = a = 0
        for _ in range(n):
            t, a = r.delta(t), r.delta(a)
            d, fl = r.byte(), r.byte()
            out.append(struct.pack("<QQBB6x", t, a, d, fl))
    return out


def read(path):
    data = open(path, "rb").read()
    if not is_framed(data):
        return data
    version, kind = struct.unpack_from("<II", data, 8)
    header = bytearray(data[:HEADER])
    struct.pack_into("<II", header, 16, HEADER, SIZES[kind])
    recs = []
    for _, n, z, esize in frames(data):
        recs.extend(_decode_frame(kind, _decompress(z, esize), n, version))
    return bytes(header) + b"".join(recs)
