/* probe.h: pages unmapped on trial to see their re-touches (probe.c: record --mrc,
 * --sample-accesses). */
#ifndef FL_PROBE_H
#define FL_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fl_runtime;
struct fl_handler;
struct fl_buf;

int fl_probe_setup(struct fl_runtime *rt);                        /* reads the environment; 0 = ok or off */
int fl_probe_start(struct fl_runtime *rt);                        /* the prober thread, after the handlers */
void fl_probe_after_fork(struct fl_runtime *rt);
bool fl_probe_claim(struct fl_runtime *rt, size_t page);          /* fault path, page locked: armed by the prober? */
bool fl_probe_wants_stack(struct fl_runtime *rt, size_t page);    /* fault path, before serving: a stack for this fault? */
bool fl_probe_back_clean(struct fl_runtime *rt, size_t page);     /* fault path, page locked: a sample's dirty page read back clean? */
void fl_probe_written(struct fl_runtime *rt, size_t page);        /* fault path: a write-protect fault made the page dirty */
void fl_probe_note(struct fl_handler *h, size_t page, uint32_t tid, unsigned kind); /* fault path: after a fault */
void fl_probe_json_meta(struct fl_runtime *rt, struct fl_buf *b);
void fl_probe_json_stats(struct fl_runtime *rt, struct fl_buf *b, uint64_t access_samples);

#endif
