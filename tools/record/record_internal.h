/* record_internal.h: what the files of `faultline record` (record.c and record_*.c, one step of a
 * run each) share with each other and nothing else does. */
#ifndef FAULTLINE_TOOLS_RECORD_INTERNAL_H
#define FAULTLINE_TOOLS_RECORD_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "record_options.h"

struct record_run {
	int status;        /* wait status */
	double seconds;    /* wall time from fork to exit */
};

/* record_checks.c */
/* Finds NAME as execvp would: as given when it holds a '/', else along PATH. On failure errno is
 * ENOENT, or EACCES/EISDIR when only something not executable was found. */
int find_command(const char *name, char *path, size_t len);
/* A script whose "#!" interpreter (or its interpreter's, as the kernel follows them) is missing or
 * not executable: one line naming it ("bad interpreter"), as a shell says, and the status a
 * native run gets (127 missing, 126 not executable); 0 when there is none to complain of. */
int check_interpreters(const char *path, const char *shown);

/* Refuses (with one clear line) a command LD_PRELOAD cannot reach; follows #! lines. */
int check_traceable(const char *path, const char *shown);
/* Finds the runtime library ($FAULTLINE_LIB, or next to the command); PATH gets its real path. */
int find_runtime_library(char *path, size_t len);
/* The runtime needs a userfaultfd that handles kernel-mode faults too. */
int check_userfaultfd(void);

/* record_outdir.c */
int output_dir_name(const struct record_options *o, char *out, size_t len);
/* A process directory: "<pid>", or "<pid>.<n>" for a later exec image of the same pid. */
int is_process_dir_name(const char *name);
/* The process of process directory NAME ("<pid>" or "<pid>.<n>") is still running: a daemon or a
 * background job that outlived the command (record waits for its direct child only). */
int process_dir_running(const char *name);
/* Makes the output directory ready and writes its absolute path into ABSOLUTE. */
int prepare_output_dir(const char *path, const struct record_options *o, char *absolute);

/* record_summary.c */
/* Says how the run went; returns how many processes wrote a trace. */
unsigned print_summary(const struct record_options *o, const struct record_run *run, const char *dir_shown,
		       const char *dir);

#endif
