/* record_codec.c: delta and varint coding of the framed records (record_codec.h). */
#include <faultline/record_codec.h>

#include <string.h>

static unsigned char *put_varint(unsigned char *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	*p++ = (unsigned char)v;
	return p;
}

static uint64_t zigzag(uint64_t now, uint64_t prev)
{
	int64_t d = (int64_t)(now - prev);
	return ((uint64_t)d << 1) ^ (uint64_t)(d >> 63);
}

static uint64_t unzigzag(uint64_t z, uint64_t prev)
{
	return prev + ((z >> 1) ^ (uint64_t)-(int64_t)(z & 1));
}

static int get_varint(const unsigned char **pos, const unsigned char *end, uint64_t *v)
{
	uint64_t out = 0;
	for (unsigned shift = 0; shift < 64; shift += 7) {
		if (*pos >= end)
			return -1;
		unsigned char b = *(*pos)++;
		out |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = out;
			return 0;
		}
	}
	return -1; /* more than 10 bytes */
}

static int get_byte(const unsigned char **pos, const unsigned char *end, uint8_t *v)
{
	if (*pos >= end)
		return -1;
	*v = *(*pos)++;
	return 0;
}

/* A delta-coded field of WIDTH bits against PREV; -1 when it does not fit. */
static int get_delta(const unsigned char **pos, const unsigned char *end, uint64_t prev, unsigned width,
		     uint64_t *v)
{
	uint64_t z;
	if (get_varint(pos, end, &z) < 0)
		return -1;
	*v = unzigzag(z, prev);
	return width < 64 && (*v >> width) ? -1 : 0;
}

/* From format version 4 (FL_TRACE_VERSION_WAIT), a fault's kind byte with this bit set is
 * followed, after service_ns, by its wait_ns (nonzero). A version-3 file never has the bit: there
 * it is a bad kind, as before. */
#define FAULT_HAS_WAIT 0x80

size_t fl_codec_record_size(uint32_t kind)
{
	switch (kind) {
	case FL_FILE_FAULTS: return sizeof(struct fl_fault_record);
	case FL_FILE_CONTEXTS: return sizeof(struct fl_fault_context);
	case FL_FILE_EVICTIONS: return sizeof(struct fl_evict_record);
	default: return 0;
	}
}

static size_t encode_fault(struct fl_fault_record *prev, const struct fl_fault_record *r, unsigned char *out)
{
	unsigned char *p = out;
	p = put_varint(p, zigzag(r->time_ns, prev->time_ns));
	p = put_varint(p, zigzag(r->addr, prev->addr));
	p = put_varint(p, zigzag(r->seq, prev->seq));
	p = put_varint(p, zigzag(r->tid, prev->tid));
	p = put_varint(p, zigzag(r->stack_id, prev->stack_id));
	*p++ = (unsigned char)(r->kind | (r->wait_ns ? FAULT_HAS_WAIT : 0));
	*p++ = r->flags;
	*p++ = r->handler;
	p = put_varint(p, zigzag(r->obj_addr, prev->obj_addr));
	p = put_varint(p, zigzag(r->obj_size, prev->obj_size));
	p = put_varint(p, zigzag(r->obj_alloc_id, prev->obj_alloc_id));
	p = put_varint(p, zigzag(r->obj_stack_id, prev->obj_stack_id));
	p = put_varint(p, zigzag(r->thread_time_ns, prev->thread_time_ns));
	p = put_varint(p, r->service_ns);
	if (r->wait_ns)
		p = put_varint(p, r->wait_ns);
	*prev = *r;
	return (size_t)(p - out);
}

static int decode_fault(struct fl_fault_record *prev, uint32_t version, const unsigned char **pos,
			const unsigned char *end, struct fl_fault_record *r)
{
	uint64_t v[12];
	memset(r, 0, sizeof(*r));
	if (get_delta(pos, end, prev->time_ns, 64, &v[0]) < 0 || get_delta(pos, end, prev->addr, 64, &v[1]) < 0 ||
	    get_delta(pos, end, prev->seq, 64, &v[2]) < 0 || get_delta(pos, end, prev->tid, 32, &v[3]) < 0 ||
	    get_delta(pos, end, prev->stack_id, 32, &v[4]) < 0 || get_byte(pos, end, &r->kind) < 0 ||
	    get_byte(pos, end, &r->flags) < 0 || get_byte(pos, end, &r->handler) < 0 ||
	    get_delta(pos, end, prev->obj_addr, 64, &v[5]) < 0 || get_delta(pos, end, prev->obj_size, 64, &v[6]) < 0 ||
	    get_delta(pos, end, prev->obj_alloc_id, 32, &v[7]) < 0 ||
	    get_delta(pos, end, prev->obj_stack_id, 32, &v[8]) < 0 ||
	    get_delta(pos, end, prev->thread_time_ns, 64, &v[9]) < 0 || get_varint(pos, end, &v[10]) < 0 ||
	    v[10] > UINT32_MAX)
		return -1;
	r->time_ns = v[0], r->addr = v[1], r->seq = v[2], r->tid = (uint32_t)v[3], r->stack_id = (uint32_t)v[4];
	r->obj_addr = v[5], r->obj_size = v[6], r->obj_alloc_id = (uint32_t)v[7], r->obj_stack_id = (uint32_t)v[8];
	r->thread_time_ns = v[9], r->service_ns = (uint32_t)v[10];
	if ((r->kind & FAULT_HAS_WAIT) && version >= FL_TRACE_VERSION_WAIT) {
		uint64_t wait;
		if (get_varint(pos, end, &wait) < 0 || wait == 0 || wait > UINT32_MAX)
			return -1;
		r->kind &= (uint8_t)~FAULT_HAS_WAIT;
		r->wait_ns = (uint32_t)wait;
	}
	*prev = *r;
	return 0;
}

static size_t encode_context(struct fl_fault_context *prev, const struct fl_fault_context *c, unsigned char *out)
{
	unsigned char *p = out;
	uint32_t npmu = c->npmu <= FL_PMU_MAX ? c->npmu : FL_PMU_MAX;
	p = put_varint(p, zigzag(c->seq, prev->seq));
	p = put_varint(p, zigzag(c->stack_id, prev->stack_id));
	p = put_varint(p, zigzag(c->tid, prev->tid));
	p = put_varint(p, npmu);
	for (uint32_t i = 0; i < npmu; i++)
		p = put_varint(p, zigzag(c->pmu[i], prev->pmu[i]));
	prev->seq = c->seq, prev->stack_id = c->stack_id, prev->tid = c->tid;
	for (uint32_t i = 0; i < npmu; i++)
		prev->pmu[i] = c->pmu[i];
	return (size_t)(p - out);
}

static int decode_context(struct fl_fault_context *prev, const unsigned char **pos, const unsigned char *end,
			  struct fl_fault_context *c)
{
	uint64_t seq, stack_id, tid, npmu;
	memset(c, 0, sizeof(*c));
	if (get_delta(pos, end, prev->seq, 64, &seq) < 0 || get_delta(pos, end, prev->stack_id, 32, &stack_id) < 0 ||
	    get_delta(pos, end, prev->tid, 32, &tid) < 0 || get_varint(pos, end, &npmu) < 0 || npmu > FL_PMU_MAX)
		return -1;
	c->seq = seq, c->stack_id = (uint32_t)stack_id, c->tid = (uint32_t)tid, c->npmu = (uint32_t)npmu;
	for (uint32_t i = 0; i < c->npmu; i++)
		if (get_delta(pos, end, prev->pmu[i], 64, &c->pmu[i]) < 0)
			return -1;
	prev->seq = c->seq, prev->stack_id = c->stack_id, prev->tid = c->tid;
	for (uint32_t i = 0; i < c->npmu; i++)
		prev->pmu[i] = c->pmu[i];
	return 0;
}

static size_t encode_evict(struct fl_evict_record *prev, const struct fl_evict_record *e, unsigned char *out)
{
	unsigned char *p = out;
	p = put_varint(p, zigzag(e->time_ns, prev->time_ns));
	p = put_varint(p, zigzag(e->addr, prev->addr));
	*p++ = e->decision;
	*p++ = e->flags;
	*prev = *e;
	return (size_t)(p - out);
}

static int decode_evict(struct fl_evict_record *prev, const unsigned char **pos, const unsigned char *end,
			struct fl_evict_record *e)
{
	memset(e, 0, sizeof(*e));
	if (get_delta(pos, end, prev->time_ns, 64, &e->time_ns) < 0 || get_delta(pos, end, prev->addr, 64, &e->addr) < 0 ||
	    get_byte(pos, end, &e->decision) < 0 || get_byte(pos, end, &e->flags) < 0)
		return -1;
	*prev = *e;
	return 0;
}

size_t fl_codec_encode(uint32_t kind, struct fl_codec_state *st, const void *rec, unsigned char *out)
{
	switch (kind) {
	case FL_FILE_FAULTS: return encode_fault(&st->fault, rec, out);
	case FL_FILE_CONTEXTS: return encode_context(&st->context, rec, out);
	case FL_FILE_EVICTIONS: return encode_evict(&st->evict, rec, out);
	default: return 0;
	}
}

int fl_codec_decode(uint32_t kind, struct fl_codec_state *st, const unsigned char **pos, const unsigned char *end,
		    void *rec)
{
	switch (kind) {
	case FL_FILE_FAULTS: return decode_fault(&st->fault, st->version, pos, end, rec);
	case FL_FILE_CONTEXTS: return decode_context(&st->context, pos, end, rec);
	case FL_FILE_EVICTIONS: return decode_evict(&st->evict, pos, end, rec);
	default: return -1;
	}
}
