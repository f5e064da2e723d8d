// The debugger's hook client (CLuaShimDebugger.h). Everything a line or call costs is decided here,
// in C: which functions get line events (only those whose lines hold a breakpoint, switched on by
// call and return events, as actboy168/lua-debug does), the stepping rules and pause. A stop calls
// the agent (Debugger/DebugAgent.lua) in a protected call; the agent answers the client's requests
// until it resumes, so the stopped Lua thread blocks inside this hook.
#include "CLuaShim.h"
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

// Levels a return looks down for a frame that needs its lines back (bk_dbg_on_return).
#define BK_DEBUG_RETURN_WALK 64
// The depth below which the agent turns line events off while it runs (lua_sethook walks them all).
#define BK_DEBUG_SHALLOW 200

// How many levels of the agent's own (its functions, pcall, the request loop) a step looks through
// for the stopped frame.
#define BK_DEBUG_AGENT_LEVELS 64

// Count events between two looks at `pause` (and an evaluation's deadline).
#define BK_DEBUG_COUNT 1000
#define BK_DEBUG_BUCKETS 256
#define BK_DEBUG_FUNCTIONS 512  // slots of the per-function cache (a power of two)
#define BK_DEBUG_THREADS 64     // slots of the per-thread return memo (a power of two)
#define BK_DEBUG_CALLED 64      // slots of the per-closure call cache (a power of two)
#define BK_DEBUG_DEEPER 4       // CallInfos remembered as deeper than the stepped frame
#define BK_DEBUG_LAYOUT_CHECKS 16  // calls that check the CallInfo read before it is trusted
#define BK_DEBUG_NAME_BYTES 200  // a function breakpoint's name and its NUL (DebugBreakpoints refuses longer)
#define BK_DEBUG_EVALUATION_STOPPED "evaluation stopped: it ran too long (the debugger's limit) or was paused"

static const char bk_debugger_agent_key = 0;  // registry[&key] = the agent function
static const char bk_debugger_self_key = 0;   // registry[&key] = the attached bk_debugger (light)
static const char bk_debugger_task_observer_key = 0;  // registry[&key] = the agent's onTask
static const char bk_debugger_called_key = 0;  // registry[&key] = a userdata holding `called`'s closures
static const char bk_debugger_step_thread_key = 0;  // registry[&key] = the thread a step is bound to
static const char bk_debugger_names_key = 0;  // registry[&key] = the function breakpoints' names' key strings

typedef struct bk_dbg_file {  // a file's line breakpoints, as the client set them
    char *path;
    int *lines;  // sorted
    int count;
} bk_dbg_file;

typedef struct bk_dbg_source {  // what a chunk's source name maps to (cached per source)
    struct bk_dbg_source *next;
    unsigned hash;
    char *source;
    size_t srclen;
    char *path;    // normalized, or NULL
    unsigned gen;  // the breakpoints' generation `lines` was copied at
    int *lines;
    int count;
} bk_dbg_source;

// Whether a function needs line events: a breakpoint lies on one of its own lines. Asked on every
// call event, so it is cached per function (its source string's address as Lua holds it and its
// line range; the source's bytes are compared too, as a string freed by the GC may leave its
// address to another) and decided again when the breakpoints change (`gen`).
typedef struct bk_dbg_function {
    const char *source;  // lua_Debug.source: the chunk's source string inside Lua
    int linedefined;
    int lastlinedefined;
    unsigned gen;  // the breakpoints' generation `lines` was decided at (~0: empty slot)
    int lines;
    bk_dbg_source *entry;
} bk_dbg_function;

// A thread's nearest frame below the running one that needs line events, by its CallInfo (which
// stands for a depth of that thread's stack): while it is there, return events stay on so that
// the return to it switches lines back on; without it, a return looks down the stack once.
enum { BK_STOP_STEP = 0, BK_STOP_ENTRY = 1, BK_STOP_PAUSE = 2 };

// The same answer by the called closure's address, for the call events of a function called
// again (most of them): no lua_getinfo at all. The closure is held (a user value of registry[&called_key]) while
// its slot names it, so its address cannot pass to another closure meanwhile.
typedef struct bk_dbg_called {
    const void *closure;
    unsigned gen;  // the breakpoints' generation `lines` was decided at
    int lines;
} bk_dbg_called;

typedef struct bk_dbg_memo {
    lua_State *L;
    const void *frame;
} bk_dbg_memo;

struct bk_debugger {
    pthread_mutex_t lock;  // guards files, functions, sources, gen
    bk_dbg_file *files;
    int file_count;
    char *functions;  // last components of the function breakpoints' names, NUL-separated
    // These two are also read without the lock (relaxed atomics, on every call event): written
    // under it, but atomically too (bk_dbg_changed), or those reads race with the writes.
    int function_count;
    unsigned gen;     // bumped by every change of breakpoints
    bk_dbg_source *sources[BK_DEBUG_BUCKETS];
    bk_runtime *rt;       // the attached state's: pokes for pause and new breakpoints (under poke_lock)
    // Held by a poke while it uses `rt`, and by attach and detach as they set it: once detach has
    // returned, no poke from another thread can reach a runtime freed with its state.
    pthread_mutex_t poke_lock;
    int pause_requested;  // atomics
    int exceptions;
    // The Lua thread's own (no lock).
    int attached_mask;
    unsigned seen_gen;
    int in_agent;
    int step_mode;      // atomic (relaxed): the transport's thread ends a pending step (release)
    lua_State *step_L;  // NULL with BK_STEP_IN: the first line of any thread (entry)
    int step_depth;
    int step_returned;  // the stepped frame returned: its caller stops at its next line or return
    // The function a `next` steps in (its source string's address and first line): another one
    // at its depth is one it tail-called.
    const char *step_source;
    int step_linedefined;
    int step_tail;  // the stepped frame was itself entered by a tail call
    const void *step_ci;  // the stepped frame's CallInfo (it stands for its depth), or NULL
    // CallInfos found deeper than the stepped frame while it lives (no walk when they run again):
    // one allocated meanwhile is deeper too, so they stay deeper until that frame returns.
    const void *step_deeper[BK_DEBUG_DEEPER];
    int step_deeper_next;
    int stop_depth;       // the stopped function's depth from the bottom, or -1: found from stop_ci
    const void *stop_ci;  // the stopped function's CallInfo (the hook's level 0), or NULL
    int entry;          // the reason of the next step stop: BK_STOP_STEP, _ENTRY or _PAUSE
    double eval_deadline;
    int eval_tripped;      // the evaluation ran out: every instruction raises until it ends
    int eval_interrupted;  // atomic: a pause asked while stopped, for the running evaluation
    int holding;           // the agent holds the deadlines' clock for a stop (bk_dbg_native_hold)
    bk_dbg_function functions_seen[BK_DEBUG_FUNCTIONS];
    bk_dbg_called called[BK_DEBUG_CALLED];
    int called_layout;  // CallInfo reads: 0 being checked, 1 trusted, -1 off (another layout)
    int called_checks;  // calls whose read agreed with lua_getinfo "f"
    bk_dbg_memo memos[BK_DEBUG_THREADS];
    // The function breakpoints' names as the Lua thread last copied them (at generation
    // `names_gen`): a call event reads them without taking the lock.
    char *names;
    int names_count;
    unsigned names_gen;
    int names_keyed;  // registry[&names_key] holds `names` split into their key strings
    // The names are being rebuilt or walked: a call event a finalizer makes meanwhile (an allocation
    // may run one, which may call or resume anything) checks no function breakpoint, rather than
    // rebuild (free) the names under the outer walk.
    int names_busy;
};

static double bk_dbg_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static unsigned bk_dbg_hash(const char *s) {
    unsigned h = 2166136261u;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static int bk_dbg_compare(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

// MARK: - Breakpoints (any thread)

// Under the lock: the breakpoints changed (and now `functions` holds `function_count` names).
static void bk_dbg_changed(bk_debugger *d, int function_count) {
    __atomic_store_n(&d->function_count, function_count, __ATOMIC_RELAXED);
    __atomic_store_n(&d->gen, d->gen + 1, __ATOMIC_RELAXED);
}

// The hub gives the debugger a count event at the state's next instruction: there it takes the new
// breakpoints or the pause (no count hook runs meanwhile: it would cost ~2x).
static void bk_dbg_poke(bk_debugger *d) {
    pthread_mutex_lock(&d->poke_lock);
    if (d->rt != NULL) bk_hook_poke(d->rt);
    pthread_mutex_unlock(&d->poke_lock);
}

static void bk_dbg_set_runtime(bk_debugger *d, bk_runtime *rt) {
    pthread_mutex_lock(&d->poke_lock);
    d->rt = rt;
    pthread_mutex_unlock(&d->poke_lock);
}

bk_debugger *bk_debugger_create(void) {
    bk_debugger *d = calloc(1, sizeof *d);
    if (d == NULL) return NULL;
    pthread_mutex_init(&d->lock, NULL);
    pthread_mutex_init(&d->poke_lock, NULL);
    for (int i = 0; i < BK_DEBUG_FUNCTIONS; i++) d->functions_seen[i].gen = ~0u;
    return d;
}

void bk_debugger_destroy(bk_debugger *d) {
    if (d == NULL) return;
    for (int i = 0; i < d->file_count; i++) {
        free(d->files[i].path);
        free(d->files[i].lines);
    }
    free(d->files);
    free(d->functions);
    free(d->names);
    for (int b = 0; b < BK_DEBUG_BUCKETS; b++) {
        for (bk_dbg_source *s = d->sources[b], *next; s != NULL; s = next) {
            next = s->next;
            free(s->source);
            free(s->path);
            free(s->lines);
            free(s);
        }
    }
    pthread_mutex_destroy(&d->lock);
    pthread_mutex_destroy(&d->poke_lock);
    free(d);
}

char *bk_debugger_normalize_path(const char *name) {
    if (name == NULL || *name == '\0') return NULL;
    char resolved[PATH_MAX];
    if (realpath(name, resolved) != NULL) return strdup(resolved);
    if (name[0] == '/') return strdup(name);
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof cwd) == NULL) return NULL;
    size_t n = strlen(cwd) + strlen(name) + 2;
    char *joined = malloc(n);
    if (joined != NULL) snprintf(joined, n, "%s/%s", cwd, name);
    return joined;
}

void bk_debugger_set_lines(bk_debugger *d, const char *path, const int *lines, int count) {
    char *normal = bk_debugger_normalize_path(path);
    if (normal == NULL) return;
    int *copy = count > 0 ? malloc(sizeof(int) * (size_t)count) : NULL;
    if (count > 0 && copy == NULL) { free(normal); return; }
    if (count > 0) {
        memcpy(copy, lines, sizeof(int) * (size_t)count);
        qsort(copy, (size_t)count, sizeof(int), bk_dbg_compare);
    }
    pthread_mutex_lock(&d->lock);
    int i = 0;
    while (i < d->file_count && strcmp(d->files[i].path, normal) != 0) i++;
    if (i == d->file_count) {
        bk_dbg_file *grown = realloc(d->files, sizeof *grown * (size_t)(d->file_count + 1));
        if (grown == NULL) {
            pthread_mutex_unlock(&d->lock);
            free(normal);
            free(copy);
            return;
        }
        d->files = grown;
        d->files[i] = (bk_dbg_file){normal, NULL, 0};
        d->file_count++;
        normal = NULL;
    }
    free(d->files[i].lines);
    d->files[i].lines = copy;
    d->files[i].count = count;
    bk_dbg_changed(d, d->function_count);
    pthread_mutex_unlock(&d->lock);
    free(normal);
    bk_dbg_poke(d);
}

void bk_debugger_set_functions(bk_debugger *d, const char *names, int count) {
    size_t size = 0;
    for (int i = 0; i < count; i++) size += strlen(names + size) + 1;
    char *copy = NULL;
    if (count > 0) {
        copy = malloc(size);
        if (copy == NULL) return;
        memcpy(copy, names, size);
    }
    pthread_mutex_lock(&d->lock);
    free(d->functions);
    d->functions = copy;
    bk_dbg_changed(d, count);
    pthread_mutex_unlock(&d->lock);
    bk_dbg_poke(d);
}

void bk_debugger_set_exceptions(bk_debugger *d, int filters) {
    pthread_mutex_lock(&d->lock);
    __atomic_store_n(&d->exceptions, filters, __ATOMIC_RELAXED);
    // The Lua thread's next event wraps pcall and xpcall when `all` asks for it.
    bk_dbg_changed(d, d->function_count);
    pthread_mutex_unlock(&d->lock);
    bk_dbg_poke(d);
}

int bk_debugger_exceptions(bk_debugger *d) { return __atomic_load_n(&d->exceptions, __ATOMIC_RELAXED); }

void bk_debugger_pause(bk_debugger *d) {
    __atomic_store_n(&d->pause_requested, 1, __ATOMIC_RELAXED);
    bk_dbg_poke(d);
}

void bk_debugger_interrupt_evaluation(bk_debugger *d) {
    __atomic_store_n(&d->eval_interrupted, 1, __ATOMIC_RELAXED);
}

void bk_debugger_release_script(bk_debugger *d) {
    pthread_mutex_lock(&d->lock);
    for (int i = 0; i < d->file_count; i++) d->files[i].count = 0;
    bk_dbg_changed(d, 0);
    pthread_mutex_unlock(&d->lock);
    __atomic_store_n(&d->exceptions, 0, __ATOMIC_RELAXED);
    // Read by the Lua thread's next event: a step left pending ends.
    __atomic_store_n(&d->step_mode, BK_STEP_NONE, __ATOMIC_RELAXED);
}

// A worker state's client starts with the session's breakpoints: `src`'s, copied under its lock,
// then set in `dst` as the client would set them (so `dst`'s state is poked to take them).
void bk_debugger_copy_breakpoints(bk_debugger *dst, bk_debugger *src) {
    pthread_mutex_lock(&src->lock);
    int file_count = src->file_count, function_count = src->function_count;
    bk_dbg_file *files = file_count > 0 ? calloc((size_t)file_count, sizeof *files) : NULL;
    size_t size = 0;
    for (int i = 0; i < function_count; i++) size += strlen(src->functions + size) + 1;
    char *functions = size > 0 ? malloc(size) : NULL;
    if ((file_count > 0 && files == NULL) || (size > 0 && functions == NULL)) {
        file_count = 0;
        function_count = 0;
    }
    for (int i = 0; i < file_count; i++) {
        files[i].path = strdup(src->files[i].path);
        files[i].count = src->files[i].count;
        files[i].lines = files[i].count > 0 ? malloc(sizeof(int) * (size_t)files[i].count) : NULL;
        if (files[i].lines != NULL) memcpy(files[i].lines, src->files[i].lines, sizeof(int) * (size_t)files[i].count);
        else files[i].count = 0;
    }
    if (function_count > 0) memcpy(functions, src->functions, size);
    int exceptions = __atomic_load_n(&src->exceptions, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&src->lock);
    for (int i = 0; i < file_count; i++) {
        if (files[i].path != NULL) bk_debugger_set_lines(dst, files[i].path, files[i].lines, files[i].count);
        free(files[i].path);
        free(files[i].lines);
    }
    free(files);
    bk_debugger_set_functions(dst, functions, function_count);
    free(functions);
    bk_debugger_set_exceptions(dst, exceptions);
}

// MARK: - The hook (the Lua thread)

// The source's entry, its lines brought up to date. The entry stays valid until the debugger is
// destroyed; its `lines` only change here, on the Lua thread.
static bk_dbg_source *bk_dbg_source_of(bk_debugger *d, const char *source) {
    static bk_dbg_source not_a_file;  // chunks of text (load("...")), "=stdin", "=[C]": no lines
    if (source == NULL || source[0] != '@') return &not_a_file;
    unsigned hash = bk_dbg_hash(source);
    bk_dbg_source **bucket = &d->sources[hash % BK_DEBUG_BUCKETS];
    pthread_mutex_lock(&d->lock);
    bk_dbg_source *s = *bucket;
    while (s != NULL && (s->hash != hash || strcmp(s->source, source) != 0)) s = s->next;
    if (s == NULL) {
        pthread_mutex_unlock(&d->lock);
        s = calloc(1, sizeof *s);
        if (s == NULL) return &not_a_file;
        s->hash = hash;
        s->source = strdup(source);
        if (s->source == NULL) {
            free(s);
            return &not_a_file;
        }
        s->srclen = strlen(source);
        s->path = bk_debugger_normalize_path(source + 1);
        s->gen = ~0u;
        pthread_mutex_lock(&d->lock);
        s->next = *bucket;
        *bucket = s;
    }
    if (s->gen != d->gen) {
        s->gen = d->gen;
        free(s->lines);
        s->lines = NULL;
        s->count = 0;
        for (int i = 0; s->path != NULL && i < d->file_count; i++) {
            if (d->files[i].count > 0 && strcmp(d->files[i].path, s->path) == 0) {
                s->lines = malloc(sizeof(int) * (size_t)d->files[i].count);
                if (s->lines != NULL) {
                    memcpy(s->lines, d->files[i].lines, sizeof(int) * (size_t)d->files[i].count);
                    s->count = d->files[i].count;
                }
                break;
            }
        }
    }
    pthread_mutex_unlock(&d->lock);
    return s;
}

// Whether a breakpoint line lies in [first, last] (last < first: the main chunk, every line).
static int bk_dbg_has_lines(const bk_dbg_source *s, int first, int last) {
    if (s->count == 0) return 0;
    if (first == 0) return 1;
    int lo = 0, hi = s->count;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (s->lines[mid] < first) lo = mid + 1; else hi = mid;
    }
    return lo < s->count && s->lines[lo] <= last;
}

// Whether the function of `ar` (its "S" filled in) has a breakpoint on one of its own lines: within
// its range, and among its active lines (a main chunk's are not those of the functions it defines).
static int bk_dbg_decide_lines(lua_State *L, lua_Debug *ar, const bk_dbg_source *s) {
    if (!bk_dbg_has_lines(s, ar->linedefined, ar->lastlinedefined)) return 0;
    if (!lua_checkstack(L, 2)) return 1;
    lua_Debug active = *ar;  // the same frame (i_ci); "L" pushes its active lines, or nil for C
    if (!lua_getinfo(L, "L", &active)) return 1;
    if (!lua_istable(L, -1)) {
        lua_pop(L, 1);
        return 1;
    }
    int found = 0;
    for (int i = 0; i < s->count && !found; i++) {
        if (ar->linedefined > 0 && (s->lines[i] < ar->linedefined || s->lines[i] > ar->lastlinedefined)) continue;
        found = lua_rawgeti(L, -1, s->lines[i]) != LUA_TNIL;
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return found;
}

// Whether the function of `ar` (its "S" filled in) needs line events; on the call path, so the
// answer is cached per function and kept until the breakpoints change. `entry`, when given, gets
// the source's entry (its lines up to date) when the answer is yes.
static int bk_dbg_needs_lines(lua_State *L, lua_Debug *ar, bk_debugger *d, bk_dbg_source **entry) {
    if (ar->source == NULL || ar->source[0] != '@') return 0;  // text chunks, C functions: no files
    unsigned gen = __atomic_load_n(&d->gen, __ATOMIC_RELAXED);
    uintptr_t key = (uintptr_t)ar->source ^ ((uintptr_t)(unsigned)ar->linedefined * 2654435761u);
    bk_dbg_function *f = &d->functions_seen[(key >> 4) & (BK_DEBUG_FUNCTIONS - 1)];
    if (f->gen == gen && f->source == ar->source && f->linedefined == ar->linedefined &&
        f->lastlinedefined == ar->lastlinedefined && f->entry->srclen == ar->srclen &&
        memcmp(f->entry->source, ar->source, ar->srclen) == 0) {
        if (entry != NULL) *entry = f->entry;
        return f->lines;
    }
    bk_dbg_source *s = bk_dbg_source_of(d, ar->source);
    int lines = bk_dbg_decide_lines(L, ar, s);
    // A "no" for a range holding a breakpoint is this function's only: another function may have
    // the same range (`return function(i)` on its first line, `end end` on its last) and that line.
    int same_for_the_range = lines || !bk_dbg_has_lines(s, ar->linedefined, ar->lastlinedefined);
    if (s->source != NULL && same_for_the_range) {  // a file's entry (not the shared one of chunks without a file)
        *f = (bk_dbg_function){ ar->source, ar->linedefined, ar->lastlinedefined, s->gen, lines, s };
    }
    if (entry != NULL) *entry = s;
    return lines;
}

static int bk_dbg_stepping(const bk_debugger *d, lua_State *L) {
    return __atomic_load_n(&d->step_mode, __ATOMIC_RELAXED) != BK_STEP_NONE && (d->step_L == L || d->step_L == NULL);
}

// L's line and return events: set only when they change (each change is a lua_sethook).
static void bk_dbg_set_extra(lua_State *L, int extra) {
    if ((lua_gethookmask(L) & (LUA_MASKLINE | LUA_MASKRET)) != extra) bk_hook_thread_extra(L, extra);
}

static bk_dbg_memo *bk_dbg_memo_of(bk_debugger *d, lua_State *L) {
    return &d->memos[((uintptr_t)L >> 6) & (BK_DEBUG_THREADS - 1)];
}

// Levels on L's stack (O(log n) probes of lua_getstack).
static int bk_dbg_depth(lua_State *L) {
    lua_Debug ar;
    int lo = 0, hi = 1;
    if (!lua_getstack(L, 0, &ar)) return 0;
    while (lua_getstack(L, hi, &ar)) { lo = hi; hi *= 2; }
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (lua_getstack(L, mid, &ar)) lo = mid; else hi = mid;
    }
    return lo + 1;
}

static int bk_dbg_hidden(const char *source) { return source != NULL && strncmp(source, "=bk/", 4) == 0; }

static int bk_dbg_wanted_mask(bk_debugger *d) {
    pthread_mutex_lock(&d->lock);
    int calls = d->function_count > 0;
    for (int i = 0; !calls && i < d->file_count; i++) calls = d->files[i].count > 0;
    pthread_mutex_unlock(&d->lock);
    // A next from a frame entered by a tail call hears of the tail call that ends it (one to
    // itself looks like that frame otherwise: bk_dbg_on_call).
    calls = calls || (__atomic_load_n(&d->step_mode, __ATOMIC_RELAXED) == BK_STEP_OVER && d->step_tail);
    return calls ? LUA_MASKCALL : 0;  // count events come from pokes
}

static void bk_dbg_hook(lua_State *L, lua_Debug *ar, void *context);

// MARK: - One stop per error

// An error crosses several handlers as it unwinds: a helper's block handler, a helper around that
// one, the script's pcall, the task's end, the top level. The first that stops shows it; the others
// let the same value pass while it unwinds the same thread. What was shown is forgotten when a
// protected call of the script's returns (pcall, xpcall, coroutine.resume): the error is handled,
// and the same value raised again later is a new error.
static const char bk_dbg_shown_thread_key = 0;  // registry[&key] = the thread the error unwinds
static const char bk_dbg_shown_value_key = 0;   // registry[&key] = the error value last stopped on

// Whether the value at `index` is the error last stopped on, unwinding `thread`.
static int bk_dbg_shown(lua_State *L, lua_State *thread, int index) {
    if (!lua_checkstack(L, 2)) return 0;
    index = lua_absindex(L, index);
    int same = lua_rawgetp(L, LUA_REGISTRYINDEX, &bk_dbg_shown_thread_key) == LUA_TTHREAD &&
               lua_tothread(L, -1) == thread;
    lua_pop(L, 1);
    if (!same) return 0;
    lua_rawgetp(L, LUA_REGISTRYINDEX, &bk_dbg_shown_value_key);
    same = bk_debugger_same_error(L, -1, index);
    lua_pop(L, 1);
    return same;
}

int bk_debugger_same_error(lua_State *L, int a, int b) {
    if (lua_rawequal(L, a, b)) return 1;
    // error(0/0): NaN is not equal to itself, but it is the same error raised once.
    if (lua_type(L, a) != LUA_TNUMBER || lua_type(L, b) != LUA_TNUMBER) return 0;
    lua_Number x = lua_tonumber(L, a), y = lua_tonumber(L, b);
    return x != x && y != y;
}

static void bk_dbg_remember_shown(lua_State *L, lua_State *thread, int index) {
    if (!lua_checkstack(L, 2)) return;
    index = lua_absindex(L, index);
    lua_pushvalue(L, index);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &bk_dbg_shown_value_key);
    if (thread == L) {
        lua_pushthread(L);
    } else {
        lua_pushthread(thread);
        lua_xmove(thread, L, 1);
    }
    lua_rawsetp(L, LUA_REGISTRYINDEX, &bk_dbg_shown_thread_key);
}

// A protected call of the script's that ran on `thread` returned: the error it caught is handled.
static void bk_dbg_forget_shown(lua_State *L, lua_State *thread) {
    if (!lua_checkstack(L, 1)) return;
    int on_thread = lua_rawgetp(L, LUA_REGISTRYINDEX, &bk_dbg_shown_thread_key) == LUA_TTHREAD &&
                    lua_tothread(L, -1) == thread;
    lua_pop(L, 1);
    if (!on_thread) return;
    lua_pushnil(L);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &bk_dbg_shown_thread_key);
    lua_pushnil(L);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &bk_dbg_shown_value_key);
}

// MARK: - pcall and xpcall seen by the "all" exception filter

// An error caught by the script's pcall stops there only if someone looks before the stack unwinds:
// a message handler. With the "all" filter on, the globals pcall and xpcall become these: Lua's own
// two, with a handler that asks the debugger first (then the script's own). They call the function
// as Lua's do (lua_pcallk from the C function the script called), so `error(msg, 2)` names the same
// level and nested pcalls take the same C stack.
static const char bk_dbg_wrapped_key = 0;   // registry[&key] = true once the globals are wrapped
static const char bk_dbg_retrying_key = 0;  // registry[&key] = the xpcall handler Lua calls again

// pcall's message handler, and xpcall's (a closure per call: upvalue 1 the script's handler, 2 whether
// it was called). A handler that raises is called again for its own error, up to a hundred times or
// so, until Lua gives up: those calls are no stops, nor is any error raised while they run (a pcall
// in the handler). The closure marks itself as retrying; its own xpcall's end clears the mark, and
// nothing else (a pcall in the handler cleared a flag for the whole state, and every retry stopped).
static int bk_dbg_caught(lua_State *L) {
    lua_settop(L, 1);
    int xpcall = !lua_isnone(L, lua_upvalueindex(1));
    int retrying = lua_rawgetp(L, LUA_REGISTRYINDEX, &bk_dbg_retrying_key) != LUA_TNIL;
    lua_pop(L, 1);
    int again = xpcall && lua_toboolean(L, lua_upvalueindex(2));
    if (!retrying && !again) bk_debugger_exception(L, 0);
    if (!xpcall) return 1;
    // Past a limit (the evaluation's too) the error is raised from the hook, where a looping
    // handler could never be stopped: the value goes on unchanged, as bk_guarded_handler does.
    if (bk_limit_tripped(bk_runtime_of(L))) return 1;
    lua_Debug self;
    if (again && !retrying && lua_getstack(L, 0, &self) && lua_getinfo(L, "f", &self))
        lua_rawsetp(L, LUA_REGISTRYINDEX, &bk_dbg_retrying_key);
    lua_pushboolean(L, 1);
    lua_replace(L, lua_upvalueindex(2));
    lua_pushvalue(L, lua_upvalueindex(1));  // xpcall's own handler, with the value unchanged
    lua_insert(L, 1);
    lua_call(L, 1, 1);
    return 1;
}

// As Lua's finishpcall; `extra`: the slots below the results (the handler, and xpcall's function).
static int bk_dbg_finish_pcall(lua_State *L, int status, lua_KContext extra) {
    bk_dbg_forget_shown(L, L);
    if (status != LUA_OK && status != LUA_YIELD) {
        // The end of the xpcall whose handler was being retried (its closure is slot 2).
        if (extra == 2 && lua_checkstack(L, 2)) {
            lua_rawgetp(L, LUA_REGISTRYINDEX, &bk_dbg_retrying_key);
            if (lua_rawequal(L, -1, 2)) {
                lua_pushnil(L);
                lua_rawsetp(L, LUA_REGISTRYINDEX, &bk_dbg_retrying_key);
            }
            lua_pop(L, 1);
        }
        lua_pushboolean(L, 0);
        lua_pushvalue(L, -2);
        return 2;
    }
    return lua_gettop(L) - (int)extra;
}

static int bk_dbg_pcall(lua_State *L) {
    luaL_checkany(L, 1);
    lua_pushboolean(L, 1);  // the first result when no error
    lua_insert(L, 1);
    lua_pushcfunction(L, bk_dbg_caught);
    lua_insert(L, 1);  // handler, true, f, args...
    int status = lua_pcallk(L, lua_gettop(L) - 3, LUA_MULTRET, 1, 1, bk_dbg_finish_pcall);
    return bk_dbg_finish_pcall(L, status, 1);
}

static int bk_dbg_xpcall(lua_State *L) {
    int n = lua_gettop(L);
    luaL_checktype(L, 2, LUA_TFUNCTION);
    lua_pushvalue(L, 2);
    lua_pushboolean(L, 0);  // not called yet
    lua_pushcclosure(L, bk_dbg_caught, 2);
    lua_replace(L, 2);      // f, handler, args...
    lua_pushboolean(L, 1);  // the first result when no error
    lua_pushvalue(L, 1);
    lua_rotate(L, 3, 2);    // f, handler, true, f, args...
    int status = lua_pcallk(L, n - 2, LUA_MULTRET, 2, 2, bk_dbg_finish_pcall);
    return bk_dbg_finish_pcall(L, status, 2);
}

int bk_debugger_owns_protected_call(lua_CFunction f) { return f == bk_dbg_pcall || f == bk_dbg_xpcall; }

static void bk_dbg_wrap_protected_calls(lua_State *L, bk_debugger *d) {
    if (!(__atomic_load_n(&d->exceptions, __ATOMIC_RELAXED) & BK_DEBUG_ALL) || !lua_checkstack(L, 4)) return;
    if (lua_rawgetp(L, LUA_REGISTRYINDEX, &bk_dbg_wrapped_key) != LUA_TNIL) {
        lua_pop(L, 1);
        return;
    }
    lua_pop(L, 1);
    lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
    lua_pushliteral(L, "xpcall");
    if (lua_rawget(L, -2) != LUA_TFUNCTION) {
        lua_pop(L, 2);
        return;
    }
    lua_pop(L, 1);
    lua_pushliteral(L, "pcall");
    lua_pushcfunction(L, bk_dbg_pcall);
    lua_rawset(L, -3);
    lua_pushliteral(L, "xpcall");
    lua_pushcfunction(L, bk_dbg_xpcall);
    lua_rawset(L, -3);
    lua_pop(L, 1);
    lua_pushboolean(L, 1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &bk_dbg_wrapped_key);
}

// Calls the agent: agent(reason, detail, line). The agent decides (a condition, a log point) and,
// when it stops, answers requests until the client resumes; it sets the next step itself.
// Runs the agent, pushed with its `nargs` arguments above it. The sandbox's limits hold while it
// runs: no deadline trips inside it (a condition's or a log point's time is the script's, and counts
// once the agent returns), the time stopped does not count against --time-limit (the agent holds
// the deadlines' clock, every state's, for a stop: `hold`), and the evaluations' instructions (the
// debugger's own 5 s limit bounds them) do not count against --instruction-limit.
static void bk_dbg_run_agent(lua_State *L, bk_debugger *d, int nargs) {
    bk_runtime *rt = bk_runtime_of(L);
    double deadline = rt != NULL ? rt->deadline : 0;
    long long used = rt != NULL ? rt->instructions_used : 0;
    const char *tripped = rt != NULL ? rt->tripped : NULL;
    if (rt != NULL) {
        rt->deadline = 0;
        rt->debugger_stopped++;
    }
    int outer_holding = d->holding;
    d->holding = 0;
    d->in_agent = 1;
    // No line events on this thread while the agent runs on it: Lua skips the hook calls inside a
    // hook, but still finds every new line of the agent's code (a condition ran 3x slower). Not on
    // a deep stack: changing the hook walks every CallInfo (lua_sethook's traps), twice a hit, which
    // costs more there than it saves (200 us a hit at depth 20,000).
    lua_Debug probe;
    if (!lua_getstack(L, BK_DEBUG_SHALLOW, &probe)) bk_hook_thread_extra(L, 0);
    bk_profiler_hold(L, 1);  // the agent's work is not the script's: not sampled
    if (bk_pcall(L, nargs, 0, 0) != LUA_OK) lua_pop(L, 1);
    bk_profiler_hold(L, 0);
    if (d->holding) bk_limits_hold(0);  // a stop that ended by an error of the agent's
    d->holding = outer_holding;
    d->in_agent = 0;
    // A pause asked while a condition or a log point ran (no stop): it stops at the script's next
    // count event (the poke that asked for it may have been spent inside the agent).
    if (__atomic_load_n(&d->pause_requested, __ATOMIC_RELAXED) && rt != NULL) {
        __atomic_store_n(&rt->hook_poked, 1, __ATOMIC_RELAXED);
        bk_hook_count_soon(L);
    }
    if (rt != NULL) rt->debugger_stopped--;
    d->eval_deadline = 0;
    d->eval_tripped = 0;
    if (rt != NULL) {
        rt->evaluation_tripped = 0;
        rt->deadline = deadline;
        rt->instructions_used = used;
        // An evaluation that ran over the budget ended with its error (an interrupt stays).
        if (tripped == NULL && rt->tripped != NULL && strcmp(rt->tripped, "instruction limit exceeded") == 0) {
            rt->tripped = NULL;
            bk_hook_refresh(L);  // a tripped thread counted by 1
        }
    }
    // Breakpoints may have changed while stopped: the line handler decides again from here.
    bk_hook_thread_extra(L, LUA_MASKLINE | LUA_MASKRET);
}

static void bk_dbg_call_agent(lua_State *L, bk_debugger *d, const char *reason, const char *detail, int line) {
    if (!lua_checkstack(L, 5)) return;
    // The stopped frame by its CallInfo: its depth (a walk of the whole stack) is found only when a
    // step needs it, not at every hit of a condition that does not hold (16 s for 20,000 hits at
    // depth 20,000).
    lua_Debug top;
    d->stop_ci = lua_getstack(L, 0, &top) ? top.i_ci : NULL;
    d->stop_depth = -1;
    lua_rawgetp(L, LUA_REGISTRYINDEX, &bk_debugger_agent_key);
    lua_pushstring(L, reason);
    if (detail != NULL) lua_pushstring(L, detail); else lua_pushnil(L);
    lua_pushinteger(L, line);
    bk_dbg_run_agent(L, d, 3);
}

static void bk_dbg_refresh(lua_State *L, bk_debugger *d) {
    unsigned gen = __atomic_load_n(&d->gen, __ATOMIC_RELAXED);
    if (gen == d->seen_gen) return;
    d->seen_gen = gen;
    int mask = bk_dbg_wanted_mask(d);
    if (mask != d->attached_mask) {
        d->attached_mask = mask;
        bk_hook_attach(L, BK_HOOK_DEBUGGER, bk_dbg_hook, d, mask, BK_DEBUG_COUNT);
    }
    bk_hook_thread_extra(L, LUA_MASKLINE | LUA_MASKRET);  // the running function may have new lines
    bk_dbg_wrap_protected_calls(L, d);
}

// The depth of L's running function (its CallInfo `top`) against the stepped frame's: -1 shallower,
// 0 the same, 1 deeper. A thread's CallInfo stands for one depth, so the stepped frame's is looked
// for a few levels down first (O(1) for the lines of the stepped function and of what it calls);
// otherwise a probe of lua_getstack(L, step_depth) decides, which walks step_depth levels.
static int bk_dbg_step_depth_compare(lua_State *L, bk_debugger *d, const void *top) {
    lua_Debug probe;
    int live = d->step_ci != NULL && !d->step_returned;  // the stepped frame has not returned
    if (d->step_ci != NULL) {
        if (top == d->step_ci) return 0;
        for (int i = 0; live && i < BK_DEBUG_DEEPER; i++)
            if (top == d->step_deeper[i]) return 1;
        for (int level = 1; level <= 8 && lua_getstack(L, level, &probe); level++)
            if ((const void *)probe.i_ci == d->step_ci) return 1;
    }
    if (lua_getstack(L, d->step_depth, &probe)) {
        if (live) {
            d->step_deeper[d->step_deeper_next] = top;
            d->step_deeper_next = (d->step_deeper_next + 1) % BK_DEBUG_DEEPER;
        }
        return 1;
    }
    return d->step_depth == 0 || lua_getstack(L, d->step_depth - 1, &probe) ? 0 : -1;
}

// The stepped frame changes (or returns): what was deeper than it is not known any more.
static void bk_dbg_step_forget_deeper(bk_debugger *d) {
    memset(d->step_deeper, 0, sizeof d->step_deeper);
}

static void bk_dbg_on_line(lua_State *L, lua_Debug *ar, bk_debugger *d) {
    if (!lua_getinfo(L, "Sl", ar)) return;
    int step_mode = __atomic_load_n(&d->step_mode, __ATOMIC_RELAXED);
    int stepping = step_mode != BK_STEP_NONE && (d->step_L == L || d->step_L == NULL);
    if (stepping && !bk_dbg_hidden(ar->source)) {
        int stop = step_mode == BK_STEP_IN;
        if (!stop) {  // depth <= step_depth (over) or < (out)
            int depth = bk_dbg_step_depth_compare(L, d, ar->i_ci);
            // Once the stepped frame has returned, a function its caller calls next on the same
            // line (`f() + g()`) runs at its depth: only the caller's lines stop a next then.
            stop = step_mode == BK_STEP_OVER && !d->step_returned ? depth <= 0 : depth < 0;
            // At the stepped depth but in another function: the stepped one tail-called it (Lua
            // reuses the frame), which ends it as a return does: the step goes on as a stepOut.
            // The same function tail-calling itself (`return f(n - 1)`) shows as a tail call where
            // the stepped frame was not one.
            if (stop && depth == 0 && step_mode == BK_STEP_OVER && !d->step_returned && d->step_source != NULL &&
                (ar->source != d->step_source || ar->linedefined != d->step_linedefined ||
                 (!d->step_tail && lua_getinfo(L, "t", ar) && ar->istailcall))) {
                __atomic_store_n(&d->step_mode, BK_STEP_OUT, __ATOMIC_RELAXED);
                stop = 0;
            }
        }
        if (stop) {
            const char *reason = d->entry == BK_STOP_ENTRY ? "entry" : d->entry == BK_STOP_PAUSE ? "pause" : "step";
            d->entry = BK_STOP_STEP;
            __atomic_store_n(&d->step_mode, BK_STEP_NONE, __ATOMIC_RELAXED);
            d->step_L = NULL;
            bk_dbg_call_agent(L, d, reason, NULL, ar->currentline);
            return;
        }
    }
    bk_dbg_source *s = NULL;
    if (!bk_dbg_needs_lines(L, ar, d, &s)) {
        if (!stepping) bk_dbg_set_extra(L, LUA_MASKRET);  // lines off here; the return decides again
        return;
    }
    int lo = 0, hi = s->count;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (s->lines[mid] < ar->currentline) lo = mid + 1; else hi = mid;
    }
    if (lo < s->count && s->lines[lo] == ar->currentline)
        bk_dbg_call_agent(L, d, "breakpoint", s->path, ar->currentline);
}

// Brings the function breakpoints' names (copied under the lock when the breakpoints change) and
// their key strings up to the breakpoints' generation: registry[&names_key] is an array with, for
// each name, the array of its parts (`Shapes.area.square`, `obj:method`) as Lua strings, so that a
// call event looks a name up without making a string. Returns how many names there are (0: none,
// or no memory for them).
// build(names, count): registry[&names_key] = the names' key strings, [0] = "__index".
static int bk_dbg_names_build(lua_State *L) {
    const char *name = lua_touserdata(L, 1);
    int count = (int)lua_tointeger(L, 2);
    lua_createtable(L, count, 1);
    lua_pushliteral(L, "__index");  // looked up without making a string (bk_dbg_push_named)
    lua_rawseti(L, -2, 0);
    for (int i = 1; i <= count; i++, name += strlen(name) + 1) {
        lua_newtable(L);
        const char *part = name;
        for (int j = 1;; j++) {
            size_t n = strcspn(part, ".:");
            lua_pushlstring(L, part, n);
            lua_rawseti(L, -2, j);
            if (part[n] == '\0') break;
            part += n + 1;
        }
        lua_rawseti(L, -2, i);
    }
    lua_rawsetp(L, LUA_REGISTRYINDEX, &bk_debugger_names_key);
    return 0;
}

static int bk_dbg_names_fresh(lua_State *L, bk_debugger *d) {
    if (d->names_busy) return 0;
    unsigned gen = __atomic_load_n(&d->gen, __ATOMIC_RELAXED);
    if (d->names_gen == gen && d->names_keyed) return d->names_count;
    pthread_mutex_lock(&d->lock);
    gen = __atomic_load_n(&d->gen, __ATOMIC_RELAXED);
    size_t size = 0;
    for (int i = 0; i < d->function_count; i++) size += strlen(d->functions + size) + 1;
    char *copy = size > 0 ? malloc(size) : NULL;
    if (copy != NULL) memcpy(copy, d->functions, size);
    int copied = copy != NULL ? d->function_count : 0;
    pthread_mutex_unlock(&d->lock);
    free(d->names);
    d->names = copy;
    d->names_count = copied;
    d->names_gen = gen;
    d->names_keyed = 0;
    // Protected: an allocation may fail, or run a finalizer that makes call events (names_busy).
    if (!lua_checkstack(L, 3)) return 0;
    d->names_busy = 1;
    lua_pushcfunction(L, bk_dbg_names_build);
    lua_pushlightuserdata(L, copy);
    lua_pushinteger(L, copied);
    int built = bk_pcall(L, 2, 0, 0) == LUA_OK;
    if (!built) lua_pop(L, 1);
    d->names_busy = 0;
    d->names_keyed = built;
    return built ? copied : 0;
}

// How many `__index` tables a name's part is looked for in (a cycle of them ends here).
#define BK_DEBUG_INDEX_CHAIN 16

// Pushes the value the name whose parts are the strings of the array at `parts` reaches from the
// globals, by raw reads only (no metamethod runs in the hook): a part missing from a table is
// looked for in its metatable's `__index` when that is a table, as an instance finds its class's
// methods. Pushes nil where it reaches nothing. `keys`: the keys' table, whose [0] is "__index"
// (no string is made here: that may run the collector, and its finalizers, in the hook).
static void bk_dbg_push_named(lua_State *L, int keys, int parts) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
    lua_Integer j = 1;
    for (; lua_istable(L, -1); j++) {
        if (lua_rawgeti(L, parts, j) != LUA_TSTRING) {  // past the last part: the value reached
            lua_pop(L, 1);
            return;
        }
        lua_pushvalue(L, -1);
        lua_rawget(L, -3);  // table, key, value
        for (int hop = 0; lua_isnil(L, -1) && hop < BK_DEBUG_INDEX_CHAIN; hop++) {
            lua_pop(L, 1);
            if (!lua_getmetatable(L, -2)) {
                lua_pushnil(L);
                break;
            }
            if (lua_rawgeti(L, keys, 0) != LUA_TSTRING) {
                lua_pop(L, 2);
                lua_pushnil(L);
                break;
            }
            lua_rawget(L, -2);  // table, key, metatable, __index
            lua_remove(L, -2);
            if (!lua_istable(L, -1)) {
                lua_pop(L, 1);
                lua_pushnil(L);
                break;
            }
            lua_replace(L, -3);  // __index, key
            lua_pushvalue(L, -1);
            lua_rawget(L, -3);
        }
        lua_replace(L, -3);  // value, key
        lua_pop(L, 1);
    }
    // Not a table: what the name reaches when no part is left, else nothing.
    int left = lua_rawgeti(L, parts, j) == LUA_TSTRING;
    lua_pop(L, 1);
    if (left) {
        lua_pop(L, 1);
        lua_pushnil(L);
    }
}

// Whether the array of key strings at `parts` spells `name` (its parts split at '.' and ':'),
// and no more.
static int bk_dbg_parts_spell(lua_State *L, int parts, const char *name) {
    const char *part = name;
    lua_Integer j = 1;
    for (;; j++) {
        size_t n = strcspn(part, ".:"), len = 0;
        const char *key = lua_rawgeti(L, parts, j) == LUA_TSTRING ? lua_tolstring(L, -1, &len) : NULL;
        int same = key != NULL && len == n && memcmp(key, part, n) == 0;
        lua_pop(L, 1);
        if (!same) return 0;
        if (part[n] == '\0') break;
        part += n + 1;
    }
    int more = lua_rawgeti(L, parts, j + 1) != LUA_TNIL;
    lua_pop(L, 1);
    return !more;
}

// The index (from 0) of the first function breakpoint's name that reaches the called function:
// the value at `called` (an index), or, with `called` 0, the Lua closure at address `closure`.
// -1 for none. The keys must be fresh (bk_dbg_names_fresh). A script may rewrite or extend the
// keys' table (it is in the registry): only the first `names_count` entries are read, and one that
// matches must still spell its name, or no breakpoint stops (a wrong one, or one past the names).
static int bk_dbg_named_match(lua_State *L, bk_debugger *d, int called, const void *closure) __attribute__((noinline));
static int bk_dbg_named_match(lua_State *L, bk_debugger *d, int called, const void *closure) {
    if (d->names_busy || !lua_checkstack(L, 8)) return -1;
    int top = lua_gettop(L);
    int found = -1;
    if (lua_rawgetp(L, LUA_REGISTRYINDEX, &bk_debugger_names_key) == LUA_TTABLE) {
        int keys = lua_gettop(L);
        const char *name = d->names;
        for (int i = 1; found < 0 && i <= d->names_count && lua_rawgeti(L, keys, i) == LUA_TTABLE;
             i++, name += strlen(name) + 1) {
            int parts = lua_gettop(L);
            bk_dbg_push_named(L, keys, parts);
            int same = called != 0 ? lua_rawequal(L, -1, called)
                                   : lua_type(L, -1) == LUA_TFUNCTION && lua_topointer(L, -1) == closure;
            if (same && bk_dbg_parts_spell(L, parts, name)) found = i - 1;
            lua_settop(L, keys);
        }
    }
    lua_settop(L, top);
    return found;
}

// A call: line events on in a function that needs them, off in one that does not (return events
// then stay on, so that the return to a caller that needs them switches them back on).
// A called function's line events: on where it needs them; else only return events while a
// thread that had lines on (a resumed coroutine) goes on.
static void bk_dbg_called_lines(lua_State *L, bk_debugger *d, int lines) {
    if (lines) {
        bk_dbg_set_extra(L, LUA_MASKLINE | LUA_MASKRET);
    } else if ((lua_gethookmask(L) & LUA_MASKLINE) && !bk_dbg_stepping(d, L)) {
        bk_dbg_set_extra(L, LUA_MASKRET);
    }
}

// The Lua closure a call event calls, read from the CallInfo as lapi.c's index2value reads a
// function's slot: the CallInfo's first field is `func` (its stack slot, in every 5.4 release), a
// slot's value's first word the closure and its byte 8 the type tag (LUA_VLCL). Two loads, where
// lua_getinfo costs about as much as the rest of the event. NULL for any other function; checked
// against lua_getinfo "f" on the first calls, and not read again if they ever disagree.
#if LUA_VERSION_NUM == 504
#define BK_LUA_VLCL (LUA_TFUNCTION | (1 << 6))  // makevariant(LUA_TFUNCTION, 0), collectable
static const void *bk_dbg_called_closure(const lua_Debug *ar) {
    const unsigned char *slot = *(const unsigned char *const *)ar->i_ci;
    return slot[8] == BK_LUA_VLCL ? *(const void *const *)slot : NULL;  // tt_ follows the 8-byte Value
}
#else
static const void *bk_dbg_called_closure(const lua_Debug *ar) { (void)ar; return NULL; }
#endif

static bk_dbg_called *bk_dbg_called_slot(bk_debugger *d, const void *closure) {
    return &d->called[((uintptr_t)closure >> 5) & (BK_DEBUG_CALLED - 1)];
}

// After a call event's full look: checks the CallInfo read against lua_getinfo "f", and once it
// is trusted keeps the answer for the closure (held as the holder userdata's user value, its slot's).
static void bk_dbg_called_remember(lua_State *L, lua_Debug *ar, bk_debugger *d, const void *closure,
                                   unsigned gen, int lines) {
    if (closure == NULL || d->called_layout < 0 || !lua_checkstack(L, 4)) return;
    lua_Debug probe = *ar;  // the same frame (i_ci)
    if (!lua_getinfo(L, "f", &probe)) return;
    if (lua_topointer(L, -1) != closure || lua_iscfunction(L, -1)) {
        d->called_layout = -1;
        lua_pop(L, 1);
        return;
    }
    if (d->called_layout == 0) {
        if (++d->called_checks >= BK_DEBUG_LAYOUT_CHECKS) d->called_layout = 1;
        lua_pop(L, 1);
        return;
    }
    // The holder: a userdata's user values, not a table's fields (a script that empties every table
    // it finds in the registry would let the held closures go). Found missing (the script removed
    // it), the slots it held are forgotten.
    if (lua_rawgetp(L, LUA_REGISTRYINDEX, &bk_debugger_called_key) != LUA_TUSERDATA) {
        lua_pop(L, 1);
        memset(d->called, 0, sizeof d->called);
        lua_newuserdatauv(L, 0, BK_DEBUG_CALLED);  // setting a user value never allocates
        lua_pushvalue(L, -1);
        lua_rawsetp(L, LUA_REGISTRYINDEX, &bk_debugger_called_key);
    }
    bk_dbg_called *slot = bk_dbg_called_slot(d, closure);
    lua_pushvalue(L, -2);
    if (!lua_setiuservalue(L, -2, (int)(slot - d->called) + 1)) {  // not ours: hold nothing
        memset(d->called, 0, sizeof d->called);
        lua_pop(L, 2);
        return;
    }
    *slot = (bk_dbg_called){ closure, gen, lines };
    lua_pop(L, 2);
}

static void bk_dbg_called_forget(lua_State *L, bk_debugger *d) {
    memset(d->called, 0, sizeof d->called);
    d->called_layout = 0;
    d->called_checks = 0;
    lua_pushnil(L);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &bk_debugger_called_key);
}

static void bk_dbg_on_call(lua_State *L, lua_Debug *ar, bk_debugger *d) {
    // The stepped frame tail-calls (itself too): it ends, as by a return, and a next goes on as a
    // stepOut (its caller's next line).
    if (ar->event == LUA_HOOKTAILCALL && ar->i_ci == d->step_ci && d->step_L == L && !d->step_returned &&
        __atomic_load_n(&d->step_mode, __ATOMIC_RELAXED) == BK_STEP_OVER) {
        __atomic_store_n(&d->step_mode, BK_STEP_OUT, __ATOMIC_RELAXED);
    }
    int functions = __atomic_load_n(&d->function_count, __ATOMIC_RELAXED);
    unsigned gen = __atomic_load_n(&d->gen, __ATOMIC_RELAXED);
    const void *closure = d->called_layout >= 0 ? bk_dbg_called_closure(ar) : NULL;
    if (!lua_getinfo(L, "S", ar)) return;
    int lines = bk_dbg_needs_lines(L, ar, d, NULL);
    bk_dbg_called_lines(L, d, lines);
    bk_dbg_called_remember(L, ar, d, closure, gen, lines);
    if (functions == 0 || bk_dbg_hidden(ar->source)) return;
    // By identity: the called function is the one a breakpoint's name reaches now, however the
    // call site names it (an alias, pcall(f), a helper's block).
    if (bk_dbg_names_fresh(L, d) == 0 || !lua_checkstack(L, 1) || !lua_getinfo(L, "f", ar)) return;
    int match = bk_dbg_named_match(L, d, lua_gettop(L), NULL);
    lua_pop(L, 1);
    // A copy: the agent's first allocation may run a finalizer whose call event rebuilds the names.
    char found[BK_DEBUG_NAME_BYTES];
    if (match >= 0) {
        const char *name = d->names;
        for (int i = 0; i < match; i++) name += strlen(name) + 1;
        snprintf(found, sizeof found, "%s", name);
        bk_dbg_call_agent(L, d, "function", found, ar->linedefined);
    }
}

// A return (`ar`: the returning function, level 0): the caller's line events as it needs them;
// return events stay on only while some frame below needs its lines back.
static void bk_dbg_on_return(lua_State *L, lua_Debug *ar, bk_debugger *d) {
    // A next or stepOut whose frame returned stops at the caller's next line; a caller that
    // returns before it has one (`return 1 + f(n - 1)`) stops as it returns, on the call's line.
    // Depths compared by probing one level (lua_getstack(L, k) fails iff the stack has at most k
    // levels): O(step_depth) a return, not the whole stack's depth (a deep recursion stepped over).
    int step_mode = __atomic_load_n(&d->step_mode, __ATOMIC_RELAXED);
    if ((step_mode == BK_STEP_OVER || step_mode == BK_STEP_OUT) && d->step_L == L) {
        if (!d->step_returned) {
            d->step_returned = bk_dbg_step_depth_compare(L, d, ar->i_ci) <= 0;  // the stepped frame returns
            if (d->step_returned) bk_dbg_step_forget_deeper(d);
        } else if (bk_dbg_step_depth_compare(L, d, ar->i_ci) < 0 &&  // its caller returns
                   lua_getinfo(L, "Sl", ar) && ar->currentline >= 0 && !bk_dbg_hidden(ar->source)) {
            d->entry = BK_STOP_STEP;
            __atomic_store_n(&d->step_mode, BK_STEP_NONE, __ATOMIC_RELAXED);
            d->step_L = NULL;
            bk_dbg_call_agent(L, d, "step", NULL, ar->currentline);
            // Stopped as it returns: a next or stepOut from here has seen its frame return.
            step_mode = __atomic_load_n(&d->step_mode, __ATOMIC_RELAXED);
            d->step_returned = (step_mode == BK_STEP_OVER || step_mode == BK_STEP_OUT) && d->step_L == L;
            return;
        }
    }
    bk_dbg_memo *memo = bk_dbg_memo_of(d, L);
    if (memo->L == L && memo->frame == (const void *)ar->i_ci) memo->L = NULL;  // that frame leaves
    lua_Debug frame;
    if (lua_getstack(L, 1, &frame) && lua_getinfo(L, "S", &frame) && bk_dbg_needs_lines(L, &frame, d, NULL)) {
        bk_dbg_set_extra(L, LUA_MASKLINE | LUA_MASKRET);
        return;
    }
    if (bk_dbg_stepping(d, L)) return;  // the line handler decides while stepping
    int below = memo->L == L;
    // Without breakpoints no frame needs lines: no walk down the stack (each level read walks it
    // from the top, O(depth^2) at every return of a deep stack's error handler after a stop).
    // With them, a walk looks BK_DEBUG_RETURN_WALK levels down at most; the frame where it gave up
    // stands in as the memo (return events on) until it returns, and the walk goes on from there.
    if (!(d->attached_mask & LUA_MASKCALL)) below = 0;
    else for (int level = 2; !below && lua_getstack(L, level, &frame); level++) {
        if (level - 2 >= BK_DEBUG_RETURN_WALK ||
            (lua_getinfo(L, "S", &frame) && bk_dbg_needs_lines(L, &frame, d, NULL))) {
            memo->L = L;
            memo->frame = frame.i_ci;
            below = 1;
        }
    }
    bk_dbg_set_extra(L, below ? LUA_MASKRET : 0);
}

// A call event of a closure called before whose thread's line events are as it needs them: most
// call events, answered without the full handler's frame.
static int bk_dbg_call_known(lua_State *L, const lua_Debug *ar, bk_debugger *d) {
    if ((ar->event != LUA_HOOKCALL && ar->event != LUA_HOOKTAILCALL) || d->in_agent || d->called_layout <= 0 ||
        bk_dbg_stepping(d, L)) return 0;
    const void *closure = bk_dbg_called_closure(ar);
    const bk_dbg_called *known = closure != NULL ? bk_dbg_called_slot(d, closure) : NULL;
    unsigned gen = __atomic_load_n(&d->gen, __ATOMIC_RELAXED);
    if (known == NULL || known->closure != closure || known->gen != gen) return 0;
    int extra = lua_gethookmask(L) & (LUA_MASKLINE | LUA_MASKRET);
    if (!(known->lines ? extra == (LUA_MASKLINE | LUA_MASKRET) : !(extra & LUA_MASKLINE))) return 0;
    // Function breakpoints: the full handler stops when a name reaches this closure now (looked up
    // by the names' key strings, which it brings up to date).
    if (__atomic_load_n(&d->function_count, __ATOMIC_RELAXED) == 0) return 1;
    return d->names_gen == gen && d->names_keyed && bk_dbg_named_match(L, d, 0, closure) < 0;
}

static void bk_dbg_hook_full(lua_State *L, lua_Debug *ar, bk_debugger *d) __attribute__((noinline));

static void bk_dbg_hook(lua_State *L, lua_Debug *ar, void *context) {
    bk_debugger *d = context;
    if (!bk_dbg_call_known(L, ar, d)) bk_dbg_hook_full(L, ar, d);
}

static void bk_dbg_hook_full(lua_State *L, lua_Debug *ar, bk_debugger *d) {
    if (d->in_agent) {
        // Only an evaluation's own threads run now (the stopped one has hooks off): stop one that
        // runs too long or that the client interrupts (pause).
        if (ar->event == LUA_HOOKCOUNT && d->eval_deadline > 0 &&
            (d->eval_tripped || bk_dbg_now() > d->eval_deadline ||
             __atomic_exchange_n(&d->eval_interrupted, 0, __ATOMIC_RELAXED))) {
            // From now on every instruction raises (count events by 1, as the limits' `tripped`),
            // until the agent ends the evaluation: code that catches the error cannot go on.
            bk_runtime *rt = bk_runtime_of(L);
            if (!d->eval_tripped) {
                d->eval_tripped = 1;
                if (rt != NULL) rt->evaluation_tripped = 1;
                bk_hook_attach(L, BK_HOOK_DEBUGGER, bk_dbg_hook, d, d->attached_mask, 1);
            }
            // The hub counts this C client as a Swift frame (swift_depth + 1) and puts it back when
            // the client returns; this one raises instead (as the limits do, from C), so it puts it
            // back itself.
            if (rt != NULL && rt->swift_depth > 0) rt->swift_depth--;
            // The error is bk.cancelled (the agent says why the evaluation ended): a task the
            // evaluation started, which it may reach through coroutines of its own, then ends as
            // cancelled, as t:cancel() ends one, and its failure does not fail the run.
            if (lua_checkstack(L, 2)) {
                lua_pushliteral(L, "bk.cancelled");
                if (lua_rawget(L, LUA_REGISTRYINDEX) != LUA_TNIL) lua_error(L);
                lua_pop(L, 1);
            }
            luaL_error(L, BK_DEBUG_EVALUATION_STOPPED);
        }
        return;
    }
    switch (ar->event) {
    case LUA_HOOKCOUNT:
        bk_dbg_refresh(L, d);
        if (__atomic_exchange_n(&d->pause_requested, 0, __ATOMIC_RELAXED)) {
            if (lua_getstack(L, 0, ar) && lua_getinfo(L, "Sl", ar) && ar->currentline >= 0 &&
                !bk_dbg_hidden(ar->source)) {
                bk_dbg_call_agent(L, d, "pause", NULL, ar->currentline);
            } else {
                // The bridge's own code (a run that has not reached the script yet, a helper's
                // walk): the agent would see no frame of the script's and drop the pause. It stops
                // at the next line of the script's instead, as a step in.
                d->entry = BK_STOP_PAUSE;
                __atomic_store_n(&d->step_mode, BK_STEP_IN, __ATOMIC_RELAXED);
                d->step_L = NULL;
                bk_hook_thread_extra(L, LUA_MASKLINE | LUA_MASKRET);
            }
        }
        break;
    case LUA_HOOKCALL:
    case LUA_HOOKTAILCALL:
        bk_dbg_on_call(L, ar, d);
        break;
    case LUA_HOOKRET:
        bk_dbg_on_return(L, ar, d);
        break;
    case LUA_HOOKLINE:
        bk_dbg_on_line(L, ar, d);
        break;
    default:
        break;
    }
}

void bk_debugger_attach(lua_State *L, bk_debugger *d, int stopOnEntry) {
    lua_rawsetp(L, LUA_REGISTRYINDEX, &bk_debugger_agent_key);
    bk_dbg_set_runtime(d, bk_runtime_of(L));
    lua_pushlightuserdata(L, d);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &bk_debugger_self_key);
    d->seen_gen = __atomic_load_n(&d->gen, __ATOMIC_RELAXED);
    bk_dbg_called_forget(L, d);
    d->attached_mask = bk_dbg_wanted_mask(d);
    bk_hook_attach(L, BK_HOOK_DEBUGGER, bk_dbg_hook, d, d->attached_mask, BK_DEBUG_COUNT);
    bk_guard_message_handlers(L);  // evaluations may trip their limit inside an xpcall
    bk_dbg_wrap_protected_calls(L, d);
    if (stopOnEntry) {
        d->entry = BK_STOP_ENTRY;
        __atomic_store_n(&d->step_mode, BK_STEP_IN, __ATOMIC_RELAXED);
        d->step_L = NULL;
    }
    bk_hook_thread_extra(L, LUA_MASKLINE | LUA_MASKRET);
    // A pause the client sent before the state was attached (a client quicker than the run's start).
    // A poke, not a count set here: the hub keeps a poke's count until its count event comes.
    if (__atomic_load_n(&d->pause_requested, __ATOMIC_RELAXED)) bk_dbg_poke(d);
}

void bk_debugger_detach(lua_State *L, bk_debugger *d) {
    bk_dbg_set_runtime(d, NULL);
    bk_hook_detach(L, BK_HOOK_DEBUGGER);
    lua_pushnil(L);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &bk_debugger_self_key);
    lua_pushnil(L);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &bk_debugger_agent_key);
    lua_pushnil(L);  // the tasks engine's observer finds itself gone and lets go
    lua_rawsetp(L, LUA_REGISTRYINDEX, &bk_debugger_task_observer_key);
    lua_pushnil(L);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &bk_debugger_step_thread_key);
    bk_dbg_called_forget(L, d);
}

void bk_debugger_forget_state(bk_debugger *d) { bk_dbg_set_runtime(d, NULL); }

void bk_debugger_push_task_observer(lua_State *L) {
    if (lua_rawgetp(L, LUA_REGISTRYINDEX, &bk_debugger_task_observer_key) != LUA_TFUNCTION) {
        lua_pop(L, 1);
        lua_pushnil(L);
    }
}

// MARK: - The agent's natives

static bk_debugger *bk_dbg_self(lua_State *L) { return lua_touserdata(L, lua_upvalueindex(1)); }

// Binds the step to `thread` (L: the running thread, which may be it), held in the registry while
// bound: a step is known by its thread's address, which a collected coroutine (a cancelled task
// never resumed again) would leave to another.
static void bk_dbg_step_bind(lua_State *L, bk_debugger *d, lua_State *thread) {
    d->step_L = thread;
    if (thread == NULL || !lua_checkstack(L, 2) || !lua_checkstack(thread, 1)) return;
    lua_pushthread(thread);
    if (thread != L) lua_xmove(thread, L, 1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &bk_debugger_step_thread_key);
}

// step(mode): how the stopped thread goes on (0 continue, 1 in, 2 over, 3 out).
static int bk_dbg_native_step(lua_State *L) {
    bk_debugger *d = bk_dbg_self(L);
    lua_Integer mode = luaL_checkinteger(L, 1);
    if (mode < BK_STEP_NONE || mode > BK_STEP_OUT) return luaL_argerror(L, 1, "bad step mode");
    d->step_returned = 0;
    d->entry = BK_STOP_STEP;
    d->step_source = NULL;
    d->step_ci = NULL;
    bk_dbg_step_forget_deeper(d);
    bk_dbg_step_bind(L, d, mode == BK_STEP_NONE ? NULL : L);
    lua_Debug frame;  // the stopped function: stop_depth levels up from the bottom
    int level = -1;
    if (mode != BK_STEP_NONE && d->stop_depth < 0 && d->stop_ci != NULL) {
        // Right below the agent's own few frames.
        for (int k = 0; k < BK_DEBUG_AGENT_LEVELS && lua_getstack(L, k, &frame); k++) {
            if ((const void *)frame.i_ci == d->stop_ci) {
                level = k;
                d->stop_depth = bk_dbg_depth(L) - k;
                break;
            }
        }
    } else if (mode != BK_STEP_NONE && d->stop_depth >= 0) {
        level = bk_dbg_depth(L) - d->stop_depth;
    }
    if (mode != BK_STEP_NONE && level < 0) mode = BK_STEP_IN;  // the stopped frame not found (never so far): the next line
    __atomic_store_n(&d->step_mode, (int)mode, __ATOMIC_RELAXED);
    d->step_depth = d->stop_depth;
    if (mode != BK_STEP_NONE && level >= 0 && lua_getstack(L, level, &frame) && lua_getinfo(L, "St", &frame)) {
        d->step_ci = frame.i_ci;
        if (mode == BK_STEP_OVER) {
            d->step_source = frame.source;
            d->step_linedefined = frame.linedefined;
            d->step_tail = frame.istailcall;
        }
    }
    // Call events as this step needs them (bk_dbg_wanted_mask), taken by this thread as the agent
    // returns (it runs inside the hook: no lua_sethook walk of its frames now).
    int mask = bk_dbg_wanted_mask(d);
    if (mask != d->attached_mask) {
        d->attached_mask = mask;
        bk_hook_attach_deferred(L, BK_HOOK_DEBUGGER, bk_dbg_hook, d, mask, BK_DEBUG_COUNT);
    }
    return 0;
}

// path(source): the absolute path of a chunk "@name", or nil.
static int bk_dbg_native_path(lua_State *L) {
    const char *source = luaL_checkstring(L, 1);
    if (source[0] != '@') return 0;
    char *path = bk_debugger_normalize_path(source + 1);
    if (path == NULL) return 0;
    lua_pushstring(L, path);
    free(path);
    return 1;
}

// evaluating(seconds) -> whether the evaluation that ran since the last call ran out (its error is
// then bk.cancelled: `evaluationStopped` says why). Threads the agent runs from now on stop after
// `seconds` (0: no limit).
static int bk_dbg_native_evaluating(lua_State *L) {
    bk_debugger *d = bk_dbg_self(L);
    lua_Number seconds = luaL_checknumber(L, 1);
    lua_pushboolean(L, d->eval_tripped);
    d->eval_deadline = seconds > 0 ? bk_dbg_now() + seconds : 0;
    d->eval_tripped = 0;
    bk_runtime *rt = bk_runtime_of(L);
    if (rt != NULL) rt->evaluation_tripped = 0;
    __atomic_store_n(&d->eval_interrupted, 0, __ATOMIC_RELAXED);
    // Count events only while an evaluation runs: an endless one must be stopped. It runs in a
    // coroutine of its own, which gets them as it is resumed; this thread runs inside the hook
    // (no events), so its own hook is not changed (on a deep stack that walks every frame).
    d->attached_mask = bk_dbg_wanted_mask(d) | (seconds > 0 ? LUA_MASKCOUNT : 0);
    bk_hook_attach_deferred(L, BK_HOOK_DEBUGGER, bk_dbg_hook, d, d->attached_mask, BK_DEBUG_COUNT);
    return 1;
}

// sources(): the files the hook has seen run (absolute paths), for loadedSources.
static int bk_dbg_native_sources(lua_State *L) {
    bk_debugger *d = bk_dbg_self(L);
    // Copied under the lock, pushed after it (a push may raise or run finalizers).
    enum { MAX = 4096 };
    char **paths = calloc(MAX, sizeof *paths);
    int n = 0;
    if (paths != NULL) {
        pthread_mutex_lock(&d->lock);
        for (int b = 0; b < BK_DEBUG_BUCKETS; b++)
            for (bk_dbg_source *s = d->sources[b]; s != NULL && n < MAX; s = s->next)
                if (s->path != NULL && (paths[n] = strdup(s->path)) != NULL) n++;
        pthread_mutex_unlock(&d->lock);
    }
    lua_pushlightuserdata(L, paths);  // freed below; a raise here would leak them, no more
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        lua_pushstring(L, paths[i]);
        lua_rawseti(L, -2, i + 1);
    }
    for (int i = 0; i < n; i++) free(paths[i]);
    free(paths);
    return 1;
}

// Post mortem: the thread at L's `thread` index died of the error at L's top (a task's, or a
// coroutine of the script's); the agent reads that thread's stack as it was where it raised.
static void bk_dbg_stop_post_mortem(lua_State *L, bk_debugger *d, int thread, const char *reason) {
    if (!lua_checkstack(L, 6)) return;
    thread = lua_absindex(L, thread);
    int err = lua_gettop(L);
    d->stop_depth = bk_dbg_depth(L);
    d->stop_ci = NULL;
    lua_rawgetp(L, LUA_REGISTRYINDEX, &bk_debugger_agent_key);
    lua_pushstring(L, reason);
    lua_pushnil(L);
    lua_pushinteger(L, 0);
    lua_pushvalue(L, thread);
    lua_pushvalue(L, err);
    bk_dbg_run_agent(L, d, 5);
}

// taskFailed(co, err): a task's function raised err and nothing in the task caught it. Stops with
// reason "exception" when a filter asks for it, post mortem: co is dead, its stack as it was where
// err was raised (the agent reads it with the debug library's thread forms).
static int bk_dbg_native_task_failed(lua_State *L) {
    bk_debugger *d = bk_dbg_self(L);
    int filters = __atomic_load_n(&d->exceptions, __ATOMIC_RELAXED);
    lua_State *co = lua_tothread(L, 1);
    if (d->in_agent || !(filters & (BK_DEBUG_UNCAUGHT | BK_DEBUG_ALL)) || co == NULL) return 0;
    lua_settop(L, 2);
    if (bk_dbg_shown(L, co, 2)) return 0;  // stopped already where a helper caught it in the task
    bk_dbg_stop_post_mortem(L, d, 1, "exception-task");
    return 0;
}

// frozenContents(t): the table a frozen view (bk.freeze) shows, or nothing. Raw reads only.
static int bk_dbg_native_frozen_contents(lua_State *L) {
    return bk_frozen_contents(L, 1) > 0 ? 1 : 0;
}

// hold(on): a stop begins (true) or ends (false): the deadlines' clock stands still meanwhile.
// Conditions and log points are not stops: their time counts (a loop that reaches a log point
// forever still runs out of --time-limit).
static int bk_dbg_native_hold(lua_State *L) {
    bk_debugger *d = lua_touserdata(L, lua_upvalueindex(1));
    int on = lua_toboolean(L, 1);
    if (on != d->holding) {
        d->holding = on;
        bk_limits_hold(on);
    }
    // A pause asked as the stop begins is answered by it (one asked while stopped ends the running
    // evaluation instead: bk_debugger_interrupt_evaluation).
    if (on) __atomic_store_n(&d->pause_requested, 0, __ATOMIC_RELAXED);
    return 0;
}

static int bk_dbg_pushnatives_protected(lua_State *L) {
    bk_debugger *d = lua_touserdata(L, 1);
    lua_createtable(L, 0, 8);
    lua_pushlightuserdata(L, d);
    lua_pushcclosure(L, bk_dbg_native_task_failed, 1);
    lua_setfield(L, -2, "taskFailed");
    lua_pushcfunction(L, bk_dbg_native_frozen_contents);
    lua_setfield(L, -2, "frozenContents");
    lua_pushlightuserdata(L, (void *)&bk_debugger_task_observer_key);
    lua_setfield(L, -2, "taskObserverKey");
    lua_pushlightuserdata(L, d);
    lua_pushcclosure(L, bk_dbg_native_step, 1);
    lua_setfield(L, -2, "step");
    lua_pushlightuserdata(L, d);
    lua_pushcclosure(L, bk_dbg_native_hold, 1);
    lua_setfield(L, -2, "hold");
    lua_pushcfunction(L, bk_dbg_native_path);
    lua_setfield(L, -2, "path");
    lua_pushliteral(L, BK_DEBUG_EVALUATION_STOPPED);
    lua_setfield(L, -2, "evaluationStopped");
    lua_pushlightuserdata(L, d);
    lua_pushcclosure(L, bk_dbg_native_evaluating, 1);
    lua_setfield(L, -2, "evaluating");
    lua_pushlightuserdata(L, d);
    lua_pushcclosure(L, bk_dbg_native_sources, 1);
    lua_setfield(L, -2, "sources");
    bk_debugger_push_key_natives(L);  // namedKeys, countNamed (DebuggerKeys.c)
    lua_pushcfunction(L, luaopen_debug);  // a private copy of the library: sandboxes have none
    lua_call(L, 0, 1);
    lua_setfield(L, -2, "debug");
    return 1;
}

int bk_debugger_pushnatives(lua_State *L, bk_debugger *d) {
    lua_pushcfunction(L, bk_dbg_pushnatives_protected);
    lua_pushlightuserdata(L, d);
    return bk_pcall(L, 1, 1, 0);
}

void bk_debugger_exception(lua_State *L, int uncaught) {
    if (lua_rawgetp(L, LUA_REGISTRYINDEX, &bk_debugger_self_key) != LUA_TLIGHTUSERDATA) {
        lua_pop(L, 1);
        return;
    }
    bk_debugger *d = lua_touserdata(L, -1);
    lua_pop(L, 1);
    int filters = __atomic_load_n(&d->exceptions, __ATOMIC_RELAXED);
    if (d->in_agent || !(filters & (uncaught ? (BK_DEBUG_UNCAUGHT | BK_DEBUG_ALL) : BK_DEBUG_ALL))) return;
    if (!lua_checkstack(L, 6) || bk_dbg_shown(L, L, -1)) return;
    // The error value is on top: the agent reads it as the handler's argument (level 1).
    int line = 0;
    lua_Debug ar;
    if (lua_getstack(L, 0, &ar) && lua_getinfo(L, "l", &ar)) line = ar.currentline;
    bk_dbg_call_agent(L, d, uncaught ? "exception" : "exception-caught", NULL, line);
    bk_dbg_remember_shown(L, L, -1);
}

// Whether the coroutine.resume (or wrap function) running at L's level 0 is the tasks engine's,
// resuming a task: then a step stays with the task. A coroutine of the script's that a helper's Lua
// resumes (a `coroutine.wrap` function passed to `bk.each` as the block) is the script's.
static int bk_dbg_resumed_by_bridge(lua_State *L, lua_State *co) {
    lua_Debug caller;
    return lua_getstack(L, 1, &caller) && lua_getinfo(L, "S", &caller) && bk_dbg_hidden(caller.source) &&
           bk_thread_is_task(L, co);
}

// A step bound to a thread that has ended goes on at the next line of any thread: the resumer may
// be the loop's own, whose callback ends without a line of the script's, and the main code (back
// from bk.await) goes on without an event.
static void bk_dbg_step_anywhere(lua_State *L, bk_debugger *d) {
    bk_dbg_step_bind(L, d, NULL);
    d->step_ci = NULL;
    d->step_returned = 0;
    __atomic_store_n(&d->step_mode, BK_STEP_IN, __ATOMIC_RELAXED);
    bk_hook_thread_extra(L, LUA_MASKLINE | LUA_MASKRET);
    if (lua_checkstack(L, 1)) {
        lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
        lua_State *main = lua_tothread(L, -1);
        lua_pop(L, 1);
        if (main != NULL && main != L) bk_hook_thread_extra(main, LUA_MASKLINE | LUA_MASKRET);
    }
}

// A step bound to co goes on in L, which co gave control back to: stepping out of (or over the end
// of) a coroutine's function stops in its resumer, as a step out of a function stops in its caller;
// so does a step over a yield (the coroutine may never be resumed).
static void bk_dbg_step_to_resumer(lua_State *L, lua_State *co, bk_debugger *d) {
    int step_mode = __atomic_load_n(&d->step_mode, __ATOMIC_RELAXED);
    if (step_mode == BK_STEP_NONE || d->step_L != co) return;
    bk_dbg_step_bind(L, d, L);
    d->step_ci = NULL;
    if (step_mode == BK_STEP_IN) {
        d->step_returned = 0;  // the next line, anywhere
    } else {
        // As the return of the resume (or close) call, L's level 0: the resumer's next line, or
        // its return when it returns on that line.
        d->step_depth = bk_dbg_depth(L);
        d->step_returned = 1;
        __atomic_store_n(&d->step_mode, BK_STEP_OUT, __ATOMIC_RELAXED);
    }
    bk_hook_thread_extra(L, LUA_MASKLINE | LUA_MASKRET);
}

void bk_debugger_resume_starting(lua_State *L, lua_State *co, void *context) {
    bk_debugger *d = context;
    if (d == NULL || d->in_agent || __atomic_load_n(&d->step_mode, __ATOMIC_RELAXED) != BK_STEP_IN) return;
    if (d->step_L == NULL) {  // the next line anywhere (a step off a task's end, a pause): co's too
        bk_hook_thread_extra(co, LUA_MASKLINE | LUA_MASKRET);
        return;
    }
    // The tasks engine's resumes are its own, but the first one of a task (bk.async runs its
    // function at once, up to its first wait): a stepIn on that line enters the task's function.
    if (d->step_L != L || (!bk_coroutine_fresh(co) && bk_dbg_resumed_by_bridge(L, co))) return;
    bk_dbg_step_bind(L, d, co);
    d->step_ci = NULL;
    bk_hook_thread_extra(co, LUA_MASKLINE | LUA_MASKRET);
}

void bk_debugger_resume_ended(lua_State *L, lua_State *co, int status, void *context) {
    bk_debugger *d = context;
    if (d == NULL || d->in_agent) return;  // an evaluation's own coroutines
    // The tasks engine's resumes are its own: a task's step waits for the task, and a task's error
    // is reported as the task's (taskFailed). A step bound to a task that has ended goes on at the
    // next line anywhere: the task's caller is the engine, and whoever awaited it runs on later.
    if (bk_dbg_resumed_by_bridge(L, co)) {
        if (__atomic_load_n(&d->step_mode, __ATOMIC_RELAXED) != BK_STEP_NONE && d->step_L == co &&
            lua_status(co) != LUA_YIELD)
            bk_dbg_step_anywhere(L, d);
        return;
    }
    bk_dbg_step_to_resumer(L, co, d);
    if (status == LUA_OK || status == LUA_YIELD || lua_gettop(L) < 1) return;
    if (!lua_checkstack(L, 2) || !lua_checkstack(co, 1)) return;
    // resume (or wrap) caught the error, now at L's top: the `all` filter stops on it, once.
    lua_pushthread(co);  // as the debug library reads another thread: room checked, then moved
    lua_xmove(co, L, 1);
    lua_pushvalue(L, -2);
    int filters = __atomic_load_n(&d->exceptions, __ATOMIC_RELAXED);
    if ((filters & BK_DEBUG_ALL) && !bk_dbg_shown(L, co, -1)) {
        bk_dbg_stop_post_mortem(L, d, -2, "exception-coroutine");
        bk_dbg_remember_shown(L, co, -1);  // until resume returns it or wrap raises it again
    }
    lua_pop(L, 2);
}

void bk_debugger_coroutine_closed(lua_State *L, lua_State *co, void *context) {
    bk_debugger *d = context;
    if (d == NULL || d->in_agent) return;
    if (!bk_dbg_resumed_by_bridge(L, co)) {
        bk_dbg_step_to_resumer(L, co, d);
    } else if (__atomic_load_n(&d->step_mode, __ATOMIC_RELAXED) != BK_STEP_NONE && d->step_L == co) {
        bk_dbg_step_anywhere(L, d);  // the tasks engine closed a task's coroutine (it failed, or was cancelled)
    }
}

void bk_debugger_error_moved(lua_State *L, lua_State *from, int raised) {
    if (!lua_checkstack(L, 1)) return;
    int shown = lua_rawgetp(L, LUA_REGISTRYINDEX, &bk_dbg_shown_thread_key) == LUA_TTHREAD &&
                lua_tothread(L, -1) == from;
    lua_pop(L, 1);
    if (!shown) return;
    if (raised) bk_dbg_remember_shown(L, L, -1);
    else bk_dbg_forget_shown(L, from);
}

void bk_debugger_error_reported(lua_State *L) {
    if (!lua_checkstack(L, 1)) return;
    int shown = lua_rawgetp(L, LUA_REGISTRYINDEX, &bk_dbg_shown_thread_key) != LUA_TNIL;
    lua_pop(L, 1);
    if (!shown) return;  // no debugger, or nothing shown: nothing written
    lua_pushnil(L);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &bk_dbg_shown_thread_key);
    lua_pushnil(L);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &bk_dbg_shown_value_key);
}

void bk_debugger_stdio(int unbuffered) {
    if (unbuffered) setvbuf(stdout, NULL, _IONBF, 0);
    fflush(stdout);
    fflush(stderr);
}

int bk_debugger_on_exit(void (*handler)(int status, void *argument), void *argument) {
    return on_exit(handler, argument);
}
