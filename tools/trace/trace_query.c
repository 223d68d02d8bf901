/* trace_query.c: what verbs ask of a loaded recording (trace_reader.h) — a fault's context, stack
 * and allocation, records by seq, stack id or alloc_id, the maps snapshot in force at a time, and
 * names of kinds (the faults merged in time order are fault_stream.c's). Everything is read-only:
 * several threads may query at once. */
#include "trace_load_state.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *fl_fault_kind_name(unsigned kind)
{
	switch (kind) {
	case FL_FAULT_FIRST_TOUCH: return "first-touch";
	case FL_FAULT_REFAULT: return "refault";
	case FL_FAULT_SOFT: return "soft";
	case FL_FAULT_CONCURRENT: return "concurrent";
	case FL_FAULT_ACCESS_SAMPLE: return "access";
	default: return "?";
	}
}

const char *fl_alloc_kind_name(unsigned kind)
{
	switch (kind) {
	case FL_ALLOC_MALLOC: return "malloc";
	case FL_ALLOC_FREE: return "free";
	case FL_ALLOC_MMAP: return "mmap";
	case FL_ALLOC_MUNMAP: return "munmap";
	default: return "?";
	}
}

uint64_t fl_fault_time_ns(const struct fl_process *proc, const struct fl_fault *fault)
{
	return proc->offset_ns + fault->rec.time_ns;
}

/* ======================================================================= joins */

const struct fl_fault *fl_process_fault_by_seq(const struct fl_process *proc, uint64_t seq)
{
	const struct fl_process_private *priv = proc->priv;
	if (priv && priv->seq_table) {
		if (seq < priv->seq_base || seq - priv->seq_base >= priv->seq_span)
			return NULL;
		uint32_t k = priv->seq_table[seq - priv->seq_base];
		return k == FL_NONE ? NULL : &proc->faults[k];
	}
	const uint32_t *index = priv ? priv->fault_by_seq : NULL;
	size_t lo = 0, hi = index ? proc->nfaults : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t s = proc->faults[index[mid]].rec.seq;
		if (s == seq)
			return &proc->faults[index[mid]];
		if (s < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const struct fl_fault_context *fl_process_context(const struct fl_process *proc, uint64_t seq)
{
	const struct fl_fault *f = fl_process_fault_by_seq(proc, seq);
	return f ? fl_fault_context(proc, f) : NULL;
}

const struct fl_fault_context *fl_fault_context(const struct fl_process *proc, const struct fl_fault *fault)
{
	if (fault->context == FL_NONE)
		return NULL;
	if (proc->priv && proc->priv->streaming)
		return &proc->priv->stream_contexts[fault->context];
	return &proc->contexts[fault->context];
}

const struct fl_stack *fl_process_stack(const struct fl_process *proc, uint32_t stack_id)
{
	size_t lo = 0, hi = proc->nstacks;
	const struct fl_process_private *priv = proc->priv;

	if (stack_id == 0)
		return NULL;
	if (priv && priv->stack_table) {
		uint32_t k = stack_id < priv->stack_span ? priv->stack_table[stack_id] : FL_NONE;
		return k == FL_NONE ? NULL : &proc->stacks[k];
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (proc->stacks[mid].id == stack_id)
			return &proc->stacks[mid];
		if (proc->stacks[mid].id < stack_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const struct fl_stack *fl_fault_stack(const struct fl_process *proc, const struct fl_fault *fault)
{
	const struct fl_fault_context *c = fl_fault_context(proc, fault);
	if (c && c->stack_id)
		return fl_process_stack(proc, c->stack_id);
	return fl_process_stack(proc, fault->rec.stack_id);
}

const struct fl_alloc_record *fl_process_alloc_by_id(const struct fl_process *proc, uint32_t alloc_id)
{
	const uint32_t *index = proc->priv ? proc->priv->alloc_by_id : NULL;
	size_t lo = 0, hi = index ? proc->priv->nalloc_by_id : 0;

	while (alloc_id && lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint32_t id = proc->allocs[index[mid]].alloc_id;
		if (id == alloc_id)
			return &proc->allocs[index[mid]];
		if (id < alloc_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const struct fl_alloc_record *fl_fault_alloc(const struct fl_process *proc, const struct fl_fault *fault)
{
	return fault->alloc == FL_NONE ? NULL : &proc->allocs[fault->alloc];
}

/* ======================================================================= maps lookup */

const struct fl_maps_snapshot *fl_process_maps_at(const struct fl_process *proc, uint64_t time_ns)
{
	size_t lo = 0, hi = proc->nmaps; /* find the first snapshot taken after time_ns */

	if (proc->nmaps == 0)
		return NULL;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (proc->maps[mid].time_ns <= time_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	return &proc->maps[lo ? lo - 1 : 0];
}

uint32_t fl_process_maps_index_at(const struct fl_process *proc, uint64_t time_ns)
{
	return proc->nmaps > 1 ? (uint32_t)(fl_process_maps_at(proc, time_ns) - proc->maps) : 0;
}
