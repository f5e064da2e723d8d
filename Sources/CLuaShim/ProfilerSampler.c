// The profiler's sampler: a thread that reads the CPU clock of each profiled state's thread and
// asks for a sample each time a period of CPU time has passed there, and the two places samples are
// taken (the hook hub's poke, for Lua; the trampoline, for an exported Swift function). The sampler
// thread never touches a lua_State: it shares relaxed atomics with the Lua threads, and its list of
// targets under `mutex` (held by attach and detach, so a target it reads is never freed under it).
#define _GNU_SOURCE
#include "CLuaShim.h"
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BK_PROFILE_LINE 8192

// A sample may cost at most this fraction of the CPU time between two samples: past it (a stack
// 200,000 calls deep, whose every poke makes lua_sethook walk all its frames), the next sample
// waits longer than a period, and carries the periods that passed as its weight.
#define BK_PROFILE_COST_SHARE 10

struct bk_profile_target {
    bk_profiler *profiler;
    bk_runtime *rt;
    char label[64];
    clockid_t clock;       // the CPU clock of the thread that attached (the one running the state)
    long long last_cpu;    // sampler thread only: CPU time sampled up to (less the sampling's own)
    long long lua_due;     // atomic: periods spent in Lua, taken by the hook at the next poke
    long long gap;         // atomic: CPU time from one sample to the next: the period, or
                           // BK_PROFILE_COST_SHARE times what the last sample cost, if more
    long long overhead_then;  // Lua thread only: rt->profiling.overhead when the last sample ended
    sigset_t saved_mask;   // the attaching thread's signal mask, given back by detach
    bk_profile_target *next;
};

struct bk_profiler {
    long long period;      // nanoseconds of CPU time per sample
    bk_profile_sink sink;
    void *context;
    pthread_mutex_t mutex;  // guards `targets`
    bk_profile_target *targets;
    pthread_t thread;
    int stopping;           // atomic
    long long outside;      // atomic: periods spent outside Lua and exported functions
};

static long long bk_ns(const struct timespec *ts) {
    return (long long)ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

// {====================================================================
// The sampler thread
// =====================================================================

static void bk_sample_target(bk_profiler *p, bk_profile_target *t) {
    struct timespec ts;
    if (clock_gettime(t->clock, &ts) != 0) return;  // the thread has ended
    bk_runtime *rt = t->rt;
    // The time spent taking samples is not the run's: counted, it would be sampled in turn (at a
    // deep stack, a sample costs more than a period: the thread would do nothing but sample).
    long long now = bk_ns(&ts) - __atomic_load_n(&rt->profiling.overhead, __ATOMIC_RELAXED);
    long long gap = __atomic_load_n(&t->gap, __ATOMIC_RELAXED);
    if (now - t->last_cpu < (gap > p->period ? gap : p->period)) return;
    long long periods = (now - t->last_cpu) / p->period;
    t->last_cpu += periods * p->period;
    if (bk_runtime_life(rt) != BK_LIFE_OPEN || __atomic_load_n(&rt->profiling.held, __ATOMIC_RELAXED) > 0) return;
    const void *swift = __atomic_load_n(&rt->profiling.swift, __ATOMIC_RELAXED);
    if (swift != NULL) {
        // Due in this function: what another one left untaken (it returned before the last
        // sample landed) was spent outside the one now running.
        long long left = 0;
        if (__atomic_load_n(&rt->profiling.swift_due_fn, __ATOMIC_RELAXED) != swift) {
            __atomic_store_n(&rt->profiling.swift_due_fn, swift, __ATOMIC_RELAXED);
            left = __atomic_exchange_n(&rt->profiling.swift_due, 0, __ATOMIC_RELAXED);
        }
        __atomic_fetch_add(&rt->profiling.swift_due, periods, __ATOMIC_RELAXED);
        if (left > 0) __atomic_fetch_add(&p->outside, left, __ATOMIC_RELAXED);
    } else if (__atomic_load_n(&rt->profiling.lua_depth, __ATOMIC_RELAXED) > 0) {
        __atomic_fetch_add(&t->lua_due, periods, __ATOMIC_RELAXED);
        bk_hook_poke(rt);
    } else {
        __atomic_fetch_add(&p->outside, periods, __ATOMIC_RELAXED);
    }
}

static void *bk_sampler_main(void *argument) {
    bk_profiler *p = argument;
    // Wakes once per period of wall-clock time: no thread spends more CPU time than that meanwhile.
    struct timespec step = { (time_t)(p->period / 1000000000LL), (long)(p->period % 1000000000LL) };
    while (!__atomic_load_n(&p->stopping, __ATOMIC_ACQUIRE)) {
        while (nanosleep(&step, NULL) != 0 && errno == EINTR) {}
        pthread_mutex_lock(&p->mutex);
        for (bk_profile_target *t = p->targets; t != NULL; t = t->next) bk_sample_target(p, t);
        pthread_mutex_unlock(&p->mutex);
    }
    return NULL;
}

bk_profiler *bk_profiler_start(long long period_ns, bk_profile_sink sink, void *context) {
    bk_profiler *p = calloc(1, sizeof *p);
    if (p == NULL) return NULL;
    p->period = period_ns > 10000 ? period_ns : 10000;  // 100,000 samples a second at most
    p->sink = sink;
    p->context = context;
    pthread_mutex_init(&p->mutex, NULL);
    if (pthread_create(&p->thread, NULL, bk_sampler_main, p) != 0) {
        pthread_mutex_destroy(&p->mutex);
        free(p);
        return NULL;
    }
    return p;
}

void bk_profiler_stop(bk_profiler *p) {
    if (p == NULL || __atomic_exchange_n(&p->stopping, 1, __ATOMIC_ACQ_REL)) return;
    pthread_join(p->thread, NULL);
}

void bk_profiler_destroy(bk_profiler *p) {
    if (p == NULL) return;
    bk_profiler_stop(p);
    pthread_mutex_destroy(&p->mutex);
    free(p);
}

long long bk_profiler_outside(bk_profiler *p) {
    return __atomic_load_n(&p->outside, __ATOMIC_RELAXED);
}

// }====================================================================

// {====================================================================
// Taking samples (on the Lua threads)
// =====================================================================

long long bk_profiler_thread_cpu(void) {
    struct timespec ts;
    return clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0 ? bk_ns(&ts) : 0;
}

static void bk_take_sample(bk_profile_target *t, lua_State *L, long long weight) {
    // The debugger's own code (an evaluation) is not the script's: what was due waits for it.
    if (__atomic_load_n(&t->rt->profiling.held, __ATOMIC_RELAXED) > 0) return;
    long long started = bk_profiler_thread_cpu();
    char line[BK_PROFILE_LINE];
    size_t length = bk_profile_collect(L, t->label, line, sizeof line);
    if (length == 0) __atomic_fetch_add(&t->profiler->outside, weight, __ATOMIC_RELAXED);
    else t->profiler->sink(t->profiler->context, line, length, weight);
    // What this sample cost (with the poke that asked for it) sets how long the next one waits.
    bk_runtime_profiling *profiling = &t->rt->profiling;
    long long overhead = __atomic_add_fetch(&profiling->overhead, bk_profiler_thread_cpu() - started, __ATOMIC_RELAXED);
    __atomic_store_n(&t->gap, BK_PROFILE_COST_SHARE * (overhead - t->overhead_then), __ATOMIC_RELAXED);
    t->overhead_then = overhead;
}

void bk_profiler_hold(lua_State *L, int held) {
    bk_runtime *rt = bk_runtime_of(L);
    if (rt != NULL) __atomic_add_fetch(&rt->profiling.held, held ? 1 : -1, __ATOMIC_RELAXED);
}

// The hook hub's client: a poke's count event is a sample of the Lua code running now.
static void bk_profile_hook(lua_State *L, lua_Debug *ar, void *context) {
    if (ar->event != LUA_HOOKCOUNT) return;
    bk_profile_target *t = context;
    if (__atomic_load_n(&t->rt->profiling.held, __ATOMIC_RELAXED) > 0) return;  // the debugger's
    long long due = __atomic_exchange_n(&t->lua_due, 0, __ATOMIC_RELAXED);
    if (due > 0) bk_take_sample(t, L, due);
}

void bk_profiler_swift_returned(lua_State *L, bk_runtime_profiling *profiling, const void *function) {
    if (__atomic_load_n(&profiling->swift_due_fn, __ATOMIC_RELAXED) != function) return;
    long long due = __atomic_exchange_n(&profiling->swift_due, 0, __ATOMIC_RELAXED);
    bk_profile_target *t = profiling->target;
    if (due > 0 && t != NULL) bk_take_sample(t, L, due);
}

void bk_profiler_call_returned(lua_State *caller, bk_runtime_profiling *profiling) {
    bk_profile_target *t = profiling->target;
    if (t == NULL) return;
    long long due = __atomic_exchange_n(&t->lua_due, 0, __ATOMIC_RELAXED);
    if (due > 0) bk_take_sample(t, caller, due);
}

bk_profile_target *bk_profiler_attach(bk_profiler *p, lua_State *L, const char *label) {
    bk_runtime *rt = bk_runtime_of(L);
    if (p == NULL || rt == NULL || rt->profiling.target != NULL) return NULL;
    bk_profile_target *t = calloc(1, sizeof *t);
    if (t == NULL) return NULL;
    struct timespec ts;
    if (pthread_getcpuclockid(pthread_self(), &t->clock) != 0 || clock_gettime(t->clock, &ts) != 0) {
        free(t);
        return NULL;
    }
    // The hub's pokes are signals (SIGURG) to this thread, and Dispatch's threads (Swift
    // concurrency's, the pool's) block them: unblocked while this thread is sampled.
    sigset_t poke;
    sigemptyset(&poke);
    sigaddset(&poke, SIGURG);
    pthread_sigmask(SIG_UNBLOCK, &poke, &t->saved_mask);
    t->profiler = p;
    t->rt = rt;
    snprintf(t->label, sizeof t->label, "%s", label != NULL ? label : "");
    t->last_cpu = bk_ns(&ts);
    __atomic_store_n(&rt->profiling.overhead, 0, __ATOMIC_RELAXED);
    rt->profiling.target = t;
    __atomic_store_n(&rt->profiling.swift_due, 0, __ATOMIC_RELAXED);
    // Asks for no events: the hub calls the client only for the pokes (no hook between samples).
    bk_hook_attach(L, BK_HOOK_PROFILER, bk_profile_hook, t, 0, 0);
    pthread_mutex_lock(&p->mutex);
    t->next = p->targets;
    p->targets = t;
    pthread_mutex_unlock(&p->mutex);
    return t;
}

void bk_profiler_detach(lua_State *L, bk_profile_target *t) {
    if (t == NULL) return;
    bk_profiler *p = t->profiler;
    pthread_mutex_lock(&p->mutex);
    for (bk_profile_target **link = &p->targets; *link != NULL; link = &(*link)->next) {
        if (*link == t) {
            *link = t->next;
            break;
        }
    }
    pthread_mutex_unlock(&p->mutex);
    bk_runtime *rt = t->rt;
    if (rt->profiling.target == t) rt->profiling.target = NULL;
    bk_hook_detach(L, BK_HOOK_PROFILER);
    if (sigismember(&t->saved_mask, SIGURG)) {
        sigset_t poke;
        sigemptyset(&poke);
        sigaddset(&poke, SIGURG);
        pthread_sigmask(SIG_BLOCK, &poke, NULL);
    }
    free(t);
}

// }====================================================================
