/* live_objects.h: the map of live objects and allocation sites (live_objects.c), as the
 * allocation log (alloc_log.c) uses it on application threads. */
#ifndef FL_LIVE_OBJECTS_H
#define FL_LIVE_OBJECTS_H

#include "context.h"
#include "thread_ctx.h"

/* live_objects.c: live objects -> allocation sites; handler side: fl_objects_resolve */
int fl_objects_setup(struct fl_runtime *rt);
void fl_objects_after_fork(struct fl_runtime *rt);
void fl_objects_resolve(struct fl_runtime *rt, uint64_t addr, struct fl_fault_record *rec);
void fl_sites_write(struct fl_runtime *rt);
void fl_sites_write_periodic(struct fl_runtime *rt); /* handler 0, every ~100 ms */

/* Objects below this size live in the shadow words; larger ones (and every mmap) in slots. */
#define FL_SMALL_OBJECT_LIMIT 16384
/* The shim serves smaller requests as this many bytes, so no two objects share a granule. */
#define FL_OBJECT_MIN_SIZE 16

/* An object as the map knows it. */
struct fl_object {
	uint64_t size;
	uint32_t alloc_id;
	uint32_t site;          /* index into the site table */
	bool logged;            /* its allocation is in the allocs log: log its end too */
};

/* The site of an allocation called from CALLER (a return address in the program, or in
 * libstdc++'s operator new: then its caller is the key); takes the site's stack when new. */
uint32_t fl_site_resolve(struct fl_thread *t, const void *caller);

/* fl_site_resolve with its common case inline: a return address already in the thread's cache
 * (a libstdc++ address is never cached by itself: its key is operator new's caller). */
static inline uint32_t fl_site_of(struct fl_thread *t, const void *caller)
{
	uint64_t key = (uint64_t)(uintptr_t)caller;
	unsigned c = (unsigned)((key >> 2) ^ (key >> 11)) & (FL_SITE_CACHE - 1);
	if (__builtin_expect(t->site_cache[c].key == key && key, 1))
		return t->site_cache[c].site;
	return fl_site_resolve(t, caller);
}
uint32_t fl_site_stack(uint32_t site);

/* Allocating thread: a new object [addr, addr + size) (size >= 1); counts it to its site. */
void fl_objects_insert(struct fl_thread *t, uint64_t addr, const struct fl_object *obj, bool is_mmap);
/* Freeing thread: the object starting at addr ends; false when the map does not know it. */
bool fl_objects_remove(struct fl_thread *t, uint64_t addr, struct fl_object *out);
/* munmap of [addr, addr + len): mmap objects lose those pages; calls ENDED for each object
 * whose last page went (with its description), and returns how many did. */
unsigned fl_objects_unmap(struct fl_thread *t, uint64_t addr, uint64_t len, void (*ended)(const struct fl_object *obj, void *arg),
			  void *arg);

/* Adds the thread's pending site-counter changes to the sites (its end, shutdown). */
void fl_site_deltas_publish(struct fl_thread *t);

#endif
