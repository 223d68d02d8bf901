/* test_string_set.c: unit tests of the tools' string table (tools/base/string_set.c): dense indexes
 * in the order added, one copy per distinct string, lookups by a length (a prefix of a longer
 * string is its own string), growth past the first table, and a set used again after it was freed. */
#include <stdio.h>
#include <string.h>

#include "string_set.h"

#include "check.h"

static void basics(void)
{
	struct string_set set = STRING_SET_INIT;
	bool added = false;

	CHECK(string_set_find(&set, "main", 4) == STRING_SET_NONE, "an empty set holds nothing");
	CHECK(string_set_add(&set, "main", 4, &added) == 0 && added, "first string: index 0, added");
	CHECK(string_set_add(&set, "foo.c", 5, &added) == 1 && added, "second string: index 1");
	CHECK(string_set_add(&set, "main", 4, &added) == 0 && !added, "the same string again: its index, not added");
	CHECK(string_set_add(&set, "mainloop", 4, &added) == 0 && !added, "\"mainloop\" cut to 4 bytes is \"main\"");
	CHECK(string_set_add(&set, "mai", 3, &added) == 2 && added, "a prefix of a string is a string of its own");
	CHECK(string_set_add(&set, "", 0, &added) == 3 && added && set.strings[3][0] == '\0', "the empty string");
	CHECK(set.count == 4 && strcmp(set.strings[1], "foo.c") == 0, "strings by index");
	CHECK(string_set_find(&set, "foo.c", 5) == 1 && string_set_find(&set, "foo", 3) == STRING_SET_NONE, "find");
	string_set_free(&set);
	CHECK(set.count == 0 && set.strings == NULL && set.nslots == 0, "freed: empty again");
	CHECK(string_set_add(&set, "again", 5, NULL) == 0, "used again after free");
	string_set_free(&set);
}

static void growth(void)
{
	struct string_set set = STRING_SET_INIT;
	char buf[32];
	int bad = 0;

	for (int i = 0; i < 20000; i++) {
		int n = snprintf(buf, sizeof(buf), "name-%d", i);
		if (string_set_add(&set, buf, (size_t)n, NULL) != (uint32_t)i)
			bad++;
	}
	const char *first = set.strings[0];
	for (int i = 0; i < 20000; i++) {
		int n = snprintf(buf, sizeof(buf), "name-%d", i);
		if (string_set_find(&set, buf, (size_t)n) != (uint32_t)i || strcmp(set.strings[i], buf) != 0)
			bad++;
	}
	CHECK(bad == 0, "20,000 strings added and found by index: %d wrong", bad);
	CHECK(set.count == 20000 && set.count * 2 <= set.nslots, "the table stays at most half full: %zu in %zu",
	      set.count, set.nslots);
	CHECK(first == set.strings[0], "a string stays where it is as the set grows");
	string_set_free(&set);
}

int main(void)
{
	basics();
	growth();
	return check_summary("test_string_set");
}
