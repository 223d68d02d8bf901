/* exec_list.c: the exec calls that take their arguments as a list (execl, execlp, execle), after
 * the heap was filled and partly evicted, with several arguments and, for execle, an environment.
 *
 * usage: exec_list MIB (execl | execlp | execle | execl0)
 * Fills MIB MiB and checks it, then execs env(1) (execl: /usr/bin/env by path, execlp: env found
 * in PATH, execle: /usr/bin/env with the environment FOO=bar only, execl0: /bin/true with no
 * argument past argv[0]). env prints the arguments it was given to run: `env echo one two three`
 * prints "one two three"; execle's run prints its environment. Natively and traced the output must
 * be the same. */
#include "planted.h"

int main(int argc, char **argv)
{
	if (argc != 3)
		die("usage: exec_list MIB (execl | execlp | execle | execl0)");
	size_t nwords;
	uint64_t *buf = malloc_filled(arg_ulong(argc, argv, 1, 1), 7, &nwords);
	verify_words(buf, nwords, 7, "before exec");
	char *const env[] = { "FOO=bar", NULL };
	fflush(stdout);
	if (strcmp(argv[2], "execl") == 0)
		execl("/usr/bin/env", "env", "echo", "one", "two", "three", (char *)NULL);
	else if (strcmp(argv[2], "execlp") == 0)
		execlp("env", "env", "echo", "one", "two", "three", (char *)NULL);
	else if (strcmp(argv[2], "execle") == 0)
		execle("/usr/bin/env", "env", (char *)NULL, env);
	else if (strcmp(argv[2], "execl0") == 0)
		execl("/bin/true", "true", (char *)NULL);
	else
		die("unknown exec '%s'", argv[2]);
	die_errno("%s", argv[2]);
}
