/* fatal.h: stopping the program when the runtime cannot go on (fatal.c), a leaf every subsystem
 * may call. What a stop flushes is not known here: runtime.c registers it at start
 * (fl_fatal_on_stop), so this file calls nothing above it. */
#ifndef FL_FATAL_H
#define FL_FATAL_H

/* Logs WHY, runs the registered shutdown (flushes the recording), and exits the whole program
 * with FL_EXIT_RUNTIME_FAILURE. A second thread that stops meanwhile waits for the first. */
void fl_fatal_stop(const char *why) __attribute__((noreturn));

/* The shutdown fl_fatal_stop runs before exiting (runtime.c: fl_runtime_shutdown); none until set. */
void fl_fatal_on_stop(void (*shutdown)(const char *reason));

#endif
