// rel_exceptions.cc: C++ exceptions thrown through frames whose heap data is evicted.
//
// A round dives DEPTH frames; every frame owns a Guard (a std::vector filled with the frame's
// pattern) and a std::string on the heap. At the bottom the thread writes a pressure buffer larger
// than -L (evicting the data of every frame above) and throws an Error that carries a 256 KiB
// payload (the exception object itself lives on the heap: __cxa_allocate_exception uses malloc).
// On the way up:
//   - every Guard's destructor verifies its vector (refaults during unwinding, in the personality
//     routine's cleanup landing pads) and counts itself;
//   - every 8th frame catches the Error by reference, verifies its payload, adds a note and
//     rethrows it with `throw;`;
//   - the frame at DEPTH/2 wraps it with std::throw_with_nested in a Wrapped exception;
// The top catches Wrapped, verifies it, unwraps the nested Error (std::rethrow_if_nested) and
// verifies the payload and the notes again; it checks that exactly DEPTH guards were destroyed.
// THREADS threads do this at the same time (concurrent unwinding). Each thread also keeps its last
// exception in a std::exception_ptr, which main rethrows and verifies after the threads are done.
//
// usage: rel_exceptions [THREADS [ROUNDS [DEPTH [PRESSURE_MiB]]]]   (defaults 4, 6, 48, 8)
// stdout (identical in every correct run): one checksum line per thread, then a total.
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

[[noreturn]] void fail(const std::string &msg)
{
	std::fprintf(stderr, "rel_exceptions: FAIL: %s\n", msg.c_str());
	std::fflush(stderr);
	std::_Exit(1);
}

inline uint64_t pattern(uint64_t i, uint64_t seed)
{
	uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ULL ^ seed;
	return x ^ (x >> 29);
}

void fill(std::vector<uint64_t> &v, uint64_t seed)
{
	for (size_t i = 0; i < v.size(); i++)
		v[i] = pattern(i, seed);
}

uint64_t verify(const std::vector<uint64_t> &v, uint64_t seed, const std::string &what)
{
	uint64_t sum = 0;
	for (size_t i = 0; i < v.size(); i++) {
		if (v[i] != pattern(i, seed)) {
			char buf[160];
			std::snprintf(buf, sizeof buf, ": word %zu of %zu (%p): expected %#" PRIx64 ", got %#" PRIx64, i,
				      v.size(), static_cast<const void *>(&v[i]), pattern(i, seed), v[i]);
			fail(what + buf);
		}
		sum = (sum ^ v[i]) * 0x100000001B3ULL;
	}
	return sum;
}

struct Context {
	unsigned thread, round, depth;
	std::vector<uint64_t> pressure;
	unsigned destroyed = 0;
	uint64_t guard_sum = 0;
	uint64_t seed(unsigned d) const { return (uint64_t(thread) << 48) ^ (uint64_t(round) << 24) ^ d; }
};

struct Guard {
	Context &ctx;
	unsigned frame;
	std::vector<uint64_t> data;
	Guard(Context &c, unsigned d) : ctx(c), frame(d), data(2048 + 512 * (d % 7))
	{
		fill(data, ctx.seed(frame));
	}
	~Guard()
	{
		ctx.guard_sum ^= verify(data, ctx.seed(frame),
					"thread " + std::to_string(ctx.thread) + " round " + std::to_string(ctx.round) +
						": guard of frame " + std::to_string(frame) + " during unwinding");
		ctx.destroyed++;
	}
};

struct Error : std::runtime_error {
	std::vector<uint64_t> payload;
	uint64_t seed;
	std::vector<std::string> notes;
	Error(uint64_t s) : std::runtime_error("deep error"), payload(32768), seed(s) { fill(payload, seed); }
};

struct Wrapped : std::runtime_error {
	std::string where;
	Wrapped(const std::string &w) : std::runtime_error("wrapped"), where(w) {}
};

void press(Context &ctx)
{
	fill(ctx.pressure, ctx.seed(0xffff));
}

__attribute__((noinline)) void dive(Context &ctx, unsigned d);

__attribute__((noinline)) void frame_body(Context &ctx, unsigned d)
{
	Guard guard(ctx, d);
	std::string label = "frame " + std::to_string(d) + std::string(200, char('a' + d % 26));
	if (d + 1 == ctx.depth) {
		press(ctx);
		throw Error(ctx.seed(0xe000 + d));
	}
	if (d % 8 == 4) {
		try {
			dive(ctx, d + 1);
		} catch (Error &e) {
			verify(e.payload, e.seed, "payload caught in frame " + std::to_string(d));
			e.notes.push_back(label);
			throw;
		}
	} else {
		dive(ctx, d + 1);
	}
}

void dive(Context &ctx, unsigned d)
{
	if (d == ctx.depth / 2) {
		try {
			frame_body(ctx, d);
		} catch (...) {
			std::throw_with_nested(Wrapped("middle frame " + std::to_string(d)));
		}
	} else {
		frame_body(ctx, d);
	}
}

struct ThreadResult {
	uint64_t sum = 0;
	std::exception_ptr last;
	uint64_t last_seed = 0;
	size_t last_notes = 0;
};

size_t expected_notes(unsigned depth)
{
	size_t n = 0;
	for (unsigned d = depth / 2; d + 1 < depth; d++) // the wrapper frame and those below it see an Error
		n += d % 8 == 4;
	return n;
}

void check_error(const Error &e, uint64_t seed, unsigned depth, const std::string &who)
{
	if (e.seed != seed)
		fail(who + ": error seed differs");
	verify(e.payload, e.seed, who + ": payload");
	if (e.notes.size() != expected_notes(depth))
		fail(who + ": " + std::to_string(e.notes.size()) + " notes, want " + std::to_string(expected_notes(depth)));
	for (const std::string &n : e.notes)
		if (n.compare(0, 6, "frame ") || n.size() < 200)
			fail(who + ": corrupt note '" + n.substr(0, 40) + "'");
}

void worker(unsigned thread, unsigned rounds, unsigned depth, size_t pressure_mib, ThreadResult &out)
{
	Context ctx{ thread, 0, depth, std::vector<uint64_t>(pressure_mib * 131072) };
	for (unsigned r = 0; r < rounds; r++) {
		ctx.round = r;
		ctx.destroyed = 0;
		ctx.guard_sum = 0;
		std::string who = "thread " + std::to_string(thread) + " round " + std::to_string(r);
		bool caught = false;
		try {
			dive(ctx, 0);
		} catch (Wrapped &w) {
			caught = true;
			if (w.where != "middle frame " + std::to_string(depth / 2))
				fail(who + ": wrapped where = " + w.where);
			try {
				std::rethrow_if_nested(w);
				fail(who + ": no nested exception");
			} catch (Error &e) {
				check_error(e, ctx.seed(0xe000 + depth - 1), depth, who);
				out.last = std::current_exception();
				out.last_seed = e.seed;
				out.last_notes = e.notes.size();
			}
		}
		if (!caught)
			fail(who + ": nothing caught at the top");
		if (ctx.destroyed != depth)
			fail(who + ": " + std::to_string(ctx.destroyed) + " guards destroyed, want " + std::to_string(depth));
		out.sum = (out.sum ^ ctx.guard_sum) * 0x100000001B3ULL;
	}
}

} // namespace

int main(int argc, char **argv)
{
	unsigned threads = argc > 1 ? unsigned(std::atoi(argv[1])) : 4;
	unsigned rounds = argc > 2 ? unsigned(std::atoi(argv[2])) : 6;
	unsigned depth = argc > 3 ? unsigned(std::atoi(argv[3])) : 48;
	size_t pressure = argc > 4 ? size_t(std::atoi(argv[4])) : 8;
	if (!threads || !rounds || depth < 16 || !pressure)
		fail("usage: rel_exceptions [THREADS [ROUNDS [DEPTH>=16 [PRESSURE_MiB]]]]");
	std::vector<ThreadResult> results(threads);
	std::vector<std::thread> pool;
	for (unsigned t = 0; t < threads; t++)
		pool.emplace_back(worker, t, rounds, depth, pressure, std::ref(results[t]));
	for (std::thread &t : pool)
		t.join();
	// every thread's last exception, rethrown in main after all that pressure
	std::vector<uint64_t> more(pressure * 131072);
	fill(more, 42);
	uint64_t total = 0;
	for (unsigned t = 0; t < threads; t++) {
		try {
			std::rethrow_exception(results[t].last);
		} catch (Error &e) {
			check_error(e, results[t].last_seed, depth, "main: exception_ptr of thread " + std::to_string(t));
		}
		std::printf("thread %u: %u rounds depth %u checksum %016" PRIx64 "\n", t, rounds, depth, results[t].sum);
		total ^= results[t].sum;
	}
	std::printf("rel_exceptions %u threads: checksum %016" PRIx64 "\n", threads, total);
	return 0;
}
