// The sampling profiler's C side (ProfilerSampler.c, ProfilerStacks.c).
//
// Samples are taken by CPU time: a sampler thread reads the CPU clock of each profiled state's
// thread and, each time a period of it has passed, asks for a sample. Where the CPU went decides
// how: in an exported Swift function (the trampoline notes which one runs), the sample is taken by
// the trampoline when that function returns, with a `[Swift] name` frame on top; in Lua, the hook
// hub is poked (a signal on the Lua thread sets its count hook to 1) and the profiler's hook
// client takes it at the next instruction. Neither installs a hook between samples, and a thread
// blocked in a read or a wait spends no CPU time, so it is never sampled. The sampler thread and
// the Lua threads share only atomics (and the list of targets, under the profiler's mutex).
#ifndef CLUASHIM_PROFILER_H
#define CLUASHIM_PROFILER_H

#include <lua.h>

typedef struct bk_profiler bk_profiler;
typedef struct bk_profile_target bk_profile_target;

/// What bk_runtime holds for the profiler: written by the thread running the state, read by the
/// sampler thread (relaxed atomics). All zero while nothing profiles the state.
typedef struct bk_runtime_profiling {
    bk_profile_target *target;  // this state's target while it is profiled, else NULL
    const void *swift;          // the exported function running now (the trampoline's), else NULL
    int lua_depth;              // protected calls and resumes into this state's Lua running now
    const void *swift_due_fn;   // the exported function `swift_due` was spent in
    long long swift_due;        // sampling periods spent in it, taken when it returns
    long long overhead;         // nanoseconds of this thread's CPU time spent taking samples (a
                                // poke's lua_sethook, collecting the stack): not the run's, the
                                // sampler leaves it out of the time it samples
    int held;                   // atomic: the debugger's agent runs (a stop, its evaluations): its
                                // time is not the script's, and is neither sampled nor counted
} bk_runtime_profiling;

/// Receives one sample: a folded stack (frames root first, separated by ';') and its weight in
/// periods. Called on the thread that ran the code, inside a hook or the trampoline: it must not
/// call Lua. Implemented by the Swift profile session.
typedef void (*bk_profile_sink)(void *context, const char *stack, size_t length, long long weight);

/// A profiler sampling every `period_ns` nanoseconds of CPU time. Starts its sampler thread;
/// NULL when the thread cannot be started.
bk_profiler *bk_profiler_start(long long period_ns, bk_profile_sink sink, void *context);
/// Stops and joins the sampler thread; targets still attached are no longer polled (detach them
/// on their threads, then destroy the profiler).
void bk_profiler_stop(bk_profiler *profiler);
void bk_profiler_destroy(bk_profiler *profiler);
/// Periods of CPU time the profiled threads spent outside Lua and exported functions (the loop
/// waiting, the host's own code): counted, not sampled.
long long bk_profiler_outside(bk_profiler *profiler);

/// The calling thread's CPU time in nanoseconds (async-signal-safe: the poke handler times its
/// lua_sethook with it).
long long bk_profiler_thread_cpu(void);

/// The debugger's agent starts (`held` 1) or ends (0) running on `L`'s state: sampling waits.
void bk_profiler_hold(lua_State *L, int held);

/// Starts sampling the state of `L` on the calling thread (the one that runs it, with its lock
/// held), its stacks rooted at `label` ("main", "worker", ...). Returns the target, or NULL when
/// the state is already profiled or not a bridge state.
bk_profile_target *bk_profiler_attach(bk_profiler *profiler, lua_State *L, const char *label);
/// Stops sampling the target's state and frees the target (same thread rules as attach).
void bk_profiler_detach(lua_State *L, bk_profile_target *target);

/// Called by the trampoline once the exported function `function` returned (its frame is still
/// on L's stack): takes the samples due in it.
void bk_profiler_swift_returned(lua_State *L, bk_runtime_profiling *profiling, const void *function);

/// Called when a protected call made inside an exported Swift function ends, `caller` being the
/// thread that called that function (its frame on top): a Lua sample asked for meanwhile and still
/// untaken (no Lua instruction ran since) was spent in C below the function, and is taken as its.
void bk_profiler_call_returned(lua_State *caller, bk_runtime_profiling *profiling);

/// Appends the folded stack of `L` (root first) for `label` to `buffer`; returns its length, or 0
/// when no Lua frame is on it. Runs inside a hook or a C function: reads only.
size_t bk_profile_collect(lua_State *L, const char *label, char *buffer, size_t size);

#endif
