/* trace_load_faults.h: loading a process's faults, stacks and contexts (trace_load_faults.c), for trace_load.c's process loader. */
#ifndef FAULTLINE_TOOLS_TRACE_LOAD_FAULTS_H
#define FAULTLINE_TOOLS_TRACE_LOAD_FAULTS_H

#include "trace_load_state.h"

int fl_load_faults(struct loader *ld);       /* faults, in time order */
int fl_load_stacks(struct loader *ld);       /* stacks */
int fl_load_fault_joins(struct loader *ld);  /* faults' stack ids checked, the seq index */
int fl_load_contexts(struct loader *ld);     /* contexts, joined to faults, in seq order */

/* Checks that stack id *ID, referenced at OFFSET of the current file by WHAT record I, exists; a
 * missing id in a trace that may be cut is cleared (*id = 0) and counted. */
int fl_load_check_stack_ref(struct loader *ld, uint32_t *id, uint64_t offset, const char *what, size_t i);

/* Releases what proc->priv holds (this file and trace_load_allocs.c fill it). */
void fl_load_private_free(struct fl_process *proc);

#endif
