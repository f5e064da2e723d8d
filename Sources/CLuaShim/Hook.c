// The hook hub: the one lua_Hook of a bridge state. Lua keeps one hook per thread, and everyone
// here needs one: the sandbox's limits (Limits.c), the profiler, the debugger and a script's own
// debug.sethook. Whoever set theirs last would switch the others off (a script's debug.sethook
// used to end --time-limit), so they all attach here and this file alone calls lua_sethook.
//
// Cost decides the shape. While LUA_MASKCOUNT or LUA_MASKLINE is on, Lua 5.4 sends every
// instruction through luaG_traceexec (about 2x slower); call and return hooks cost a C call per
// Lua call. So the hub asks Lua only for what someone needs now, and nothing when nobody does; a
// client that must notice something soon (a sample is due, a pause was asked) pokes the hub
// instead of counting: the running thread's count is set to 1 once, from a signal handler on the
// thread that runs Lua (what lua.c does for Ctrl-C), never by lua_sethook from another thread.
#define _GNU_SOURCE
#include "CLuaShim.h"
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>

// The Lua thread of a bridge state that runs on this OS thread, for signal handlers. Not
// initial-exec: bk.so (the Swift runtime linked in) would not fit in the static TLS block left for
// dlopen. A signal handler reads it only on a thread that wrote it first (bk_hook_enter, before
// `os_thread` names that thread), so its TLS block already exists and the read never allocates.
static __thread lua_State *bk_running = NULL;
// Its state's runtime, which outlives the lua_State (the Swift storage holds it past lua_close): a
// signal handler checks the state's life there before it touches `bk_running`, so a poke that
// lands while the state closes (os.exit(code, true), a finalizer at close) never reads freed memory.
static __thread bk_runtime *bk_running_rt = NULL;
// SIGURG unblocked on this thread (Dispatch's threads block it, and a poke must reach them).
static __thread int bk_poke_unblocked = 0;

static const int bk_event_masks[] = {LUA_MASKCALL, LUA_MASKRET, LUA_MASKLINE, LUA_MASKCOUNT, LUA_MASKCALL};

static void bk_hub(lua_State *L, lua_Debug *ar);

// Countdowns restarted (lua_sethook restarts the count) between two count events of the limits,
// after which the next instruction is checked: a loop that changes hooks (debug.sethook(f, "l")
// debug.sethook()) would otherwise restart the count before it ever ran out, and no limit or
// interrupt would stop it. A call of the script's own hook counts as one too: Lua counts the hook
// function's instructions but drops a count event that falls due inside it (hooks are off there),
// so with a short hook on every line the limits' count may always run out inside the hook. Each
// is charged to the instruction budget as one instruction, a floor for what ran uncounted.
#define BK_RESTARTS_BEFORE_CHECK 64

// Another's hook on L (the REPL's Ctrl-C stop hook, which puts back the one it replaced, or a
// stock lua5.4's debug.sethook with bk.so): the hub leaves it alone.
static int bk_foreign_hook(lua_State *L) {
    lua_Hook hook = lua_gethook(L);
    return hook != NULL && hook != bk_hub;
}

// MARK: - What a thread needs

static int bk_wants_limits(const bk_runtime *rt) {
    return __atomic_load_n(&rt->limits_hooked, __ATOMIC_RELAXED) || rt->tripped != NULL;
}

// The state-wide events and the count step (INT_MAX: no count events).
static int bk_state_mask(const bk_runtime *rt, int *count) {
    int mask = 0;
    *count = INT_MAX;
    if (bk_wants_limits(rt)) {
        mask |= LUA_MASKCOUNT;
        *count = rt->tripped != NULL ? 1 : bk_limits_step(rt);
    }
    for (int slot = 0; slot < BK_HOOK_SLOTS; slot++) {
        const bk_hook_client *client = &rt->hook_clients[slot];
        if (client->fn == NULL) continue;
        mask |= client->mask;
        if ((client->mask & LUA_MASKCOUNT) && client->count < *count) *count = client->count;
    }
    return mask;
}

static const char bk_script_hooks_key = 0;  // registry[&key] = { [thread] = {f, mask, count, owed} }

// Pushes the script's hook record of L (debug.sethook), or nil. Only when a script ever set one.
static int bk_push_script_hook(lua_State *L) {
    if (lua_rawgetp(L, LUA_REGISTRYINDEX, &bk_script_hooks_key) != LUA_TTABLE) return LUA_TNIL;
    lua_pushthread(L);
    int type = lua_rawget(L, -2);
    lua_remove(L, -2);
    return type;
}

static lua_Integer bk_record_int(lua_State *L, int record, int field) {
    lua_rawgeti(L, record, field);
    lua_Integer value = lua_tointeger(L, -1);
    lua_pop(L, 1);
    return value;
}

// Sets L's hook to what it needs now: the state-wide events, the script's own on L, and the
// debugger's extra events on L (`keep`: the line/call/return bits to leave on, -1: as they are).
static void bk_hub_apply(lua_State *L, bk_runtime *rt, int keep) {
    if (bk_foreign_hook(L)) return;
    int count;
    int mask = bk_state_mask(rt, &count);
    int current = lua_gethook(L) == bk_hub ? lua_gethookmask(L) : 0;
    int per_thread = LUA_MASKCALL | LUA_MASKRET | LUA_MASKLINE;
    if (keep < 0) keep = rt->hook_clients[BK_HOOK_DEBUGGER].fn != NULL ? current & per_thread : 0;
    mask |= keep & per_thread;
    if (rt->script_hooks && lua_checkstack(L, 3)) {
        if (bk_push_script_hook(L) == LUA_TTABLE) {
            int own = (int)bk_record_int(L, lua_gettop(L), 2);
            int every = (int)bk_record_int(L, lua_gettop(L), 3);
            mask |= own;
            if ((own & LUA_MASKCOUNT) && every < count) count = every;
        }
        lua_pop(L, 1);
    }
    int limits = bk_wants_limits(rt);
    if (__atomic_load_n(&rt->hook_poked, __ATOMIC_RELAXED) ||
        (limits && (__atomic_load_n(&rt->interrupted, __ATOMIC_RELAXED) ||
                    rt->hook_restarts >= BK_RESTARTS_BEFORE_CHECK))) {
        mask |= LUA_MASKCOUNT;
        count = 1;
    }
    if (count == INT_MAX) count = 0;
    if (mask == 0) {
        if (lua_gethook(L) != NULL && lua_gethook(L) == bk_hub) lua_sethook(L, NULL, 0, 0);
        return;
    }
    if (lua_gethook(L) != bk_hub || current != mask || lua_gethookcount(L) != count) {
        if (current & LUA_MASKCOUNT) rt->hook_restarts++;
        lua_sethook(L, bk_hub, mask, count);
    }
}

// MARK: - The hook

// The script's hook (debug.sethook), called as Lua's own hookf calls it: (event name, line).
static void bk_call_script_hook(lua_State *L, bk_runtime *rt, lua_Debug *ar, int event_mask) {
    static const char *const names[] = {"call", "return", "line", "count", "tail call"};
    if (!lua_checkstack(L, 4)) return;
    if (bk_push_script_hook(L) != LUA_TTABLE) {
        lua_pop(L, 1);
        return;
    }
    int record = lua_gettop(L);
    int own = (int)bk_record_int(L, record, 2);
    int call = (own & event_mask) != 0;
    if (call && ar->event == LUA_HOOKCOUNT) {
        // The hub counts in steps of at most the script's count: call it once that many passed.
        lua_Integer every = bk_record_int(L, record, 3);
        lua_Integer owed = bk_record_int(L, record, 4) + lua_gethookcount(L);
        call = owed >= every;
        lua_pushinteger(L, call ? owed - every : owed);
        lua_rawseti(L, record, 4);
    }
    if (!call) {
        lua_pop(L, 1);
        return;
    }
    rt->hook_restarts++;  // before the call: its error unwinds this frame
    lua_rawgeti(L, record, 1);
    lua_remove(L, record);
    lua_pushstring(L, names[ar->event]);
    if (ar->currentline >= 0) lua_pushinteger(L, ar->currentline);
    else lua_pushnil(L);
    lua_call(L, 2, 0);  // its error unwinds the hooked code, as with Lua's own debug.sethook
}

static void bk_hub(lua_State *L, lua_Debug *ar) {
    // bk_runtime_of, here without its call: the hub runs at every call event the debugger follows.
    void *ud = NULL;
    bk_runtime *rt = lua_getallocf(L, &ud) == bk_alloc ? (bk_runtime *)ud : NULL;
    if (rt == NULL) {
        lua_sethook(L, NULL, 0, 0);
        return;
    }
    int event_mask = bk_event_masks[ar->event];
    int poked = 0;
    if (ar->event == LUA_HOOKCOUNT) {
        rt->instructions_used += rt->hook_restarts;  // each ran at least one instruction uncounted
        rt->hook_restarts = 0;
        poked = __atomic_exchange_n(&rt->hook_poked, 0, __ATOMIC_RELAXED);
        bk_limits_count(L, rt);  // raises once a limit trips (no client has run yet)
    }
    for (int slot = 0; slot < BK_HOOK_SLOTS; slot++) {
        bk_hook_client client = rt->hook_clients[slot];
        if (client.fn == NULL) continue;
        // The debugger also gets the events of its per-thread extras (bk_hook_thread_extra).
        int wanted = (client.mask & event_mask) || (poked && event_mask == LUA_MASKCOUNT) ||
                     (slot == BK_HOOK_DEBUGGER && event_mask != LUA_MASKCOUNT);
        if (!wanted) continue;
        // A client may be Swift: allocations must not fail (raise) while its frame is live.
        int saved_depth = rt->swift_depth;
        rt->swift_depth = saved_depth + 1;
        client.fn(L, ar, client.context);
        rt->swift_depth = saved_depth;
    }
    if (rt->script_hooks) bk_call_script_hook(L, rt, ar, event_mask);
    // A count event puts the count back; the script's hook may have changed its own. Call, return
    // and line events (the debugger's, on the hot path) change nothing a client did not apply
    // itself (bk_hook_thread_extra, bk_hook_attach), and a poke meanwhile set its own count.
    if (ar->event == LUA_HOOKCOUNT || rt->script_hooks) bk_hub_apply(L, rt, -1);
}

// MARK: - Clients

void bk_hook_attach_deferred(lua_State *L, int slot, bk_hook_fn fn, void *context, int mask, int count) {
    bk_runtime *rt = bk_runtime_of(L);
    if (rt == NULL || slot < 0 || slot >= BK_HOOK_SLOTS) return;
    rt->hook_clients[slot] = (bk_hook_client){ fn, context, mask, count > 0 ? count : 1 };
}

void bk_hook_attach(lua_State *L, int slot, bk_hook_fn fn, void *context, int mask, int count) {
    bk_hook_attach_deferred(L, slot, fn, context, mask, count);
    bk_runtime *rt = bk_runtime_of(L);
    if (rt != NULL) bk_hub_apply(L, rt, -1);
}

void bk_hook_detach(lua_State *L, int slot) {
    bk_runtime *rt = bk_runtime_of(L);
    if (rt == NULL || slot < 0 || slot >= BK_HOOK_SLOTS) return;
    rt->hook_clients[slot] = (bk_hook_client){ NULL, NULL, 0, 0 };
    bk_hub_apply(L, rt, slot == BK_HOOK_DEBUGGER ? 0 : -1);
}

void bk_hook_thread_extra(lua_State *L, int mask) {
    bk_runtime *rt = bk_runtime_of(L);
    if (rt != NULL) bk_hub_apply(L, rt, mask);
}

void bk_hook_refresh(lua_State *L) {
    bk_runtime *rt = bk_runtime_of(L);
    if (rt != NULL) bk_hub_apply(L, rt, -1);
}

// Whether the debugger follows calls (it has breakpoints): then a thread that goes on running
// after others ran (a coroutine resumed, the thread that resumed it) gets line and return events
// until the debugger has looked at its running function, which may have got breakpoints meanwhile
// (the debugger keeps them only where they are needed, and only the running thread hears of new
// breakpoints).
static int bk_debugger_follows(const bk_runtime *rt) {
    const bk_hook_client *debugger = &rt->hook_clients[BK_HOOK_DEBUGGER];
    return debugger->fn != NULL && (debugger->mask & LUA_MASKCALL);
}

// A coroutine about to run: it gets the hub when the state wants one (a coroutine created before a
// client attached has none) and drops a stale one.
// The hub on `co` as the state wants it now, about to run: resumed, or closed (its pending
// `__close` handlers run on it, also once it has died by an error).
static void bk_hub_prepare_any(lua_State *co, bk_runtime *rt) {
    if (bk_debugger_follows(rt)) {
        bk_hub_apply(co, rt, LUA_MASKLINE | LUA_MASKRET);
        return;
    }
    int wanted = bk_wants_limits(rt) || rt->script_hooks || __atomic_load_n(&rt->hook_poked, __ATOMIC_RELAXED);
    for (int slot = 0; slot < BK_HOOK_SLOTS && !wanted; slot++) wanted = rt->hook_clients[slot].fn != NULL;
    if (wanted || lua_gethook(co) == bk_hub) bk_hub_apply(co, rt, -1);
}

static void bk_hub_prepare(lua_State *co, bk_runtime *rt) {
    if (lua_status(co) != LUA_OK && lua_status(co) != LUA_YIELD) return;  // dead: resume says so
    bk_hub_prepare_any(co, rt);
}

void bk_hook_resumed(lua_State *L) {
    bk_runtime *rt = L != NULL ? bk_runtime_of(L) : NULL;
    // Not while the debugger's agent runs (a stop, a condition): the resumer is then the stopped
    // thread, inside the hook (no events), or an evaluation's own coroutine, whose hook a resume
    // leaves as it was; lua_sethook would walk every frame of a deep stack, twice a hit.
    if (rt != NULL && rt->debugger_stopped == 0 && bk_debugger_follows(rt)) bk_hub_apply(L, rt, LUA_MASKLINE | LUA_MASKRET);
}

// L goes on after co ran (resumed, or closed): the debugger's events as it follows them, and a limit
// (or the debugger's evaluation limit) that tripped in co raises at L's next instruction: every
// instruction raises once one has tripped, and L's own count would let it run up to a step's worth
// on (and return normally, or yield, from where it caught co's error).
static void bk_hook_back_from(lua_State *L, bk_runtime *rt) {
    bk_hook_resumed(L);
    if (rt != NULL && (rt->tripped != NULL || rt->evaluation_tripped)) bk_hook_count_soon(L);
}

void bk_hook_prepare(lua_State *co) {
    bk_runtime *rt = bk_runtime_of(co);
    if (rt != NULL) bk_hub_prepare(co, rt);
}

void bk_hook_count_soon(lua_State *L) {
    bk_runtime *rt = bk_runtime_of(L);
    if (rt == NULL || bk_foreign_hook(L) || (lua_gethook(L) != bk_hub && !bk_wants_limits(rt))) return;
    int mask = lua_gethook(L) == bk_hub ? lua_gethookmask(L) : 0;
    lua_sethook(L, bk_hub, mask | LUA_MASKCOUNT, 1);  // the next count event puts the step back
}

void bk_hook_count_soon_async(lua_State *L) {
    // From another thread (a worker told to stop): lua_sethook is meant to be called
    // asynchronously (lua.c calls it from a signal handler). Only L itself gets it; a coroutine
    // running inside L stops once it yields or returns to L.
    if (bk_foreign_hook(L)) return;  // the interrupt stays pending: the hub sees it when back
    int mask = lua_gethook(L) == bk_hub ? lua_gethookmask(L) : 0;
    lua_sethook(L, bk_hub, mask | LUA_MASKCOUNT, 1);
}

// MARK: - Pokes

lua_State *bk_hook_running(void) { return bk_running; }

// The OS thread a state's Lua runs on is known only while it runs (a poke then signals it); it is
// forgotten when the outermost entry of that state on this thread leaves, so no signal goes to a
// thread that has moved on (or ended).
lua_State *bk_hook_enter(lua_State *L) {
    lua_State *previous = bk_running;
    bk_runtime *rt = bk_runtime_of(L);
    bk_running = rt != NULL ? L : NULL;
    bk_running_rt = rt;
    if (rt != NULL) {
        if (!bk_poke_unblocked) {
            sigset_t urg;
            sigemptyset(&urg);
            sigaddset(&urg, SIGURG);
            pthread_sigmask(SIG_UNBLOCK, &urg, NULL);
            bk_poke_unblocked = 1;
        }
        if (previous == NULL || bk_runtime_of(previous) != rt)
            __atomic_store_n(&rt->os_thread, (unsigned long)pthread_self(), __ATOMIC_RELAXED);
        if (__atomic_load_n(&rt->hook_poked, __ATOMIC_RELAXED)) bk_hub_apply(L, rt, -1);
    }
    return previous;
}

void bk_hook_leave(lua_State *L, lua_State *previous) {
    bk_running = previous;
    bk_running_rt = previous != NULL ? bk_runtime_of(previous) : NULL;  // an outer frame's: alive
    bk_runtime *rt = bk_runtime_of(L);
    if (rt != NULL && (previous == NULL || bk_runtime_of(previous) != rt))
        __atomic_store_n(&rt->os_thread, 0UL, __ATOMIC_RELAXED);
}

int bk_hook_poke_here(void) {
    lua_State *L = bk_running;
    bk_runtime *rt = bk_running_rt;
    if (L == NULL || rt == NULL || bk_runtime_life(rt) != BK_LIFE_OPEN) return 0;
    __atomic_store_n(&rt->hook_poked, 1, __ATOMIC_RELAXED);
    if (bk_foreign_hook(L)) return 1;  // the poke stays pending: the hub sees it when back
    // As lua.c's SIGINT handler: lua_sethook is meant to be called asynchronously on L's thread.
    int mask = lua_gethook(L) == bk_hub ? lua_gethookmask(L) : 0;
    // Armed already (pokes while C code runs): lua_sethook walks every CallInfo (settraps), which
    // in a 200,000-deep stack costs more than a sampling period, so a poke per period would never
    // let the thread get back to Lua.
    if ((mask & LUA_MASKCOUNT) && lua_gethookcount(L) == 1) return 1;
    // Timed for the profiler, which does not charge the run with its own cost.
    long long started = rt->profiling.target != NULL ? bk_profiler_thread_cpu() : -1;
    lua_sethook(L, bk_hub, mask | LUA_MASKCOUNT, 1);
    if (started >= 0) __atomic_fetch_add(&rt->profiling.overhead, bk_profiler_thread_cpu() - started, __ATOMIC_RELAXED);
    return 1;
}

#define BK_POKE_SIGNAL SIGURG  // ignored by default: a stray one harms nothing

static void bk_poke_handler(int signal) {
    (void)signal;
    int saved = errno;
    bk_runtime *rt = bk_running_rt;
    if (rt != NULL && __atomic_load_n(&rt->hook_poked, __ATOMIC_RELAXED)) bk_hook_poke_here();
    errno = saved;
}

static void bk_install_poke_handler(void) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = bk_poke_handler;
    action.sa_flags = SA_RESTART;  // a read or a wait the signal lands in goes on
    sigemptyset(&action.sa_mask);
    sigaction(BK_POKE_SIGNAL, &action, NULL);
}

void bk_hook_poke(bk_runtime *rt) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, bk_install_poke_handler);
    // Set first: a state that runs no Lua now sees it when it next enters Lua (bk_hook_enter).
    __atomic_store_n(&rt->hook_poked, 1, __ATOMIC_RELAXED);
    unsigned long thread = __atomic_load_n(&rt->os_thread, __ATOMIC_RELAXED);
    if (thread != 0) pthread_kill((pthread_t)thread, BK_POKE_SIGNAL);
}

// MARK: - The script's debug.sethook and coroutines

static lua_State *bk_hook_thread_arg(lua_State *L, int *arg) {
    if (lua_isthread(L, 1)) {
        *arg = 1;
        return lua_tothread(L, 1);
    }
    *arg = 0;
    return L;
}

// debug.sethook([thread,] hook, mask [, count]), as Lua's own, but kept beside the bridge's hooks.
static int bk_db_sethook(lua_State *L) {
    int arg;
    lua_State *L1 = bk_hook_thread_arg(L, &arg);
    int mask = 0;
    lua_Integer count = 0;
    int off = lua_isnoneornil(L, arg + 1);
    if (!off) {
        const char *smask = luaL_checkstring(L, arg + 2);
        luaL_checktype(L, arg + 1, LUA_TFUNCTION);
        count = (int)luaL_optinteger(L, arg + 3, 0);  // as Lua's: 2^32 + 3 is 3, -5 stays (no events)
        if (strchr(smask, 'c')) mask |= LUA_MASKCALL;
        if (strchr(smask, 'r')) mask |= LUA_MASKRET;
        if (strchr(smask, 'l')) mask |= LUA_MASKLINE;
        if (count > 0) mask |= LUA_MASKCOUNT;
        off = mask == 0;
    }
    if (lua_rawgetp(L, LUA_REGISTRYINDEX, &bk_script_hooks_key) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_createtable(L, 0, 1);
        lua_createtable(L, 0, 1);
        lua_pushliteral(L, "k");
        lua_setfield(L, -2, "__mode");
        lua_setmetatable(L, -2);
        lua_pushvalue(L, -1);
        lua_rawsetp(L, LUA_REGISTRYINDEX, &bk_script_hooks_key);
    }
    if (arg == 1) lua_pushvalue(L, 1);
    else lua_pushthread(L);
    if (off) {
        lua_pushnil(L);
    } else {
        lua_createtable(L, 4, 0);
        lua_pushvalue(L, arg + 1);
        lua_rawseti(L, -2, 1);
        lua_pushinteger(L, mask);
        lua_rawseti(L, -2, 2);
        lua_pushinteger(L, count);
        lua_rawseti(L, -2, 3);
        lua_pushinteger(L, 0);
        lua_rawseti(L, -2, 4);
    }
    lua_rawset(L, -3);
    bk_runtime *rt = bk_runtime_of(L);
    if (rt != NULL) {
        if (!off) rt->script_hooks = 1;  // sticky: the hub looks records up from now on
        bk_hub_apply(L1, rt, -1);
    }
    return 0;
}

// debug.gethook([thread]) -> the script's hook, its mask and count, or fail when it set none (the
// bridge's own hooks are not the script's business).
static int bk_db_gethook(lua_State *L) {
    int arg;
    lua_State *L1 = bk_hook_thread_arg(L, &arg);
    if (lua_rawgetp(L, LUA_REGISTRYINDEX, &bk_script_hooks_key) != LUA_TTABLE) {
        luaL_pushfail(L);
        return 1;
    }
    if (arg == 1) lua_pushvalue(L, 1);
    else lua_pushthread(L);
    if (lua_rawget(L, -2) != LUA_TTABLE) {
        luaL_pushfail(L);
        return 1;
    }
    (void)L1;
    int record = lua_gettop(L);
    lua_rawgeti(L, record, 1);
    int mask = (int)bk_record_int(L, record, 2);
    char smask[4];
    int k = 0;
    if (mask & LUA_MASKCALL) smask[k++] = 'c';
    if (mask & LUA_MASKRET) smask[k++] = 'r';
    if (mask & LUA_MASKLINE) smask[k++] = 'l';
    smask[k] = '\0';
    lua_pushstring(L, smask);
    lua_pushinteger(L, bk_record_int(L, record, 3));
    return 3;
}

// Resumes `co` with `narg` values from L's top: Lua's auxresume, with the hub prepared on `co` and
// `co` recorded as the Lua thread running here. Returns the number of results moved to L, or -1
// with the error on top.
int bk_coroutine_fresh(lua_State *co) {
    lua_Debug probe;
    return lua_status(co) == LUA_OK && !lua_getstack(co, 0, &probe) && lua_gettop(co) > 0;
}

static int bk_auxresume(lua_State *L, lua_State *co, int narg) {
    if (!lua_checkstack(co, narg)) {
        lua_pushliteral(L, "too many arguments to resume");
        return -1;
    }
    bk_runtime *rt = bk_runtime_of(co);
    if (rt != NULL) bk_hub_prepare(co, rt);
    // Whether co runs (suspended, or not started), or lua_resume refuses it (running, normal,
    // dead) without running it: the debugger then has nothing to hear of (no step goes into it,
    // and the refusal is no error of co's).
    int runs = lua_status(co) == LUA_YIELD || bk_coroutine_fresh(co);
    int debugged = runs && rt != NULL && rt->hook_clients[BK_HOOK_DEBUGGER].fn != NULL;
    if (debugged) bk_debugger_resume_starting(L, co, rt->hook_clients[BK_HOOK_DEBUGGER].context);
    lua_xmove(L, co, narg);
    int nres;
    lua_State *previous = bk_running;
    bk_runtime *previous_rt = bk_running_rt;
    bk_running = co;
    bk_running_rt = rt;
    int status = lua_resume(co, L, narg, &nres);
    bk_running = previous;
    bk_running_rt = previous_rt;
    bk_hook_back_from(L, rt);
    // The results (or the error) are moved off co before the debugger hears of it: a stop there
    // may run evaluations that close or resume co.
    int r = -1;
    if (status == LUA_OK || status == LUA_YIELD) {
        if (!lua_checkstack(L, nres + 1)) {
            lua_pop(co, nres);
            lua_pushliteral(L, "too many results to resume");
        } else {
            lua_xmove(co, L, nres);
            r = nres;
        }
    } else {
        lua_xmove(co, L, 1);
    }
    if (debugged && rt->hook_clients[BK_HOOK_DEBUGGER].fn != NULL)
        bk_debugger_resume_ended(L, co, r < 0 ? status : LUA_OK, rt->hook_clients[BK_HOOK_DEBUGGER].context);
    return r;
}

static lua_State *bk_getco(lua_State *L) {
    lua_State *co = lua_tothread(L, 1);
    luaL_argexpected(L, co, 1, "thread");  // Lua 5.4.4's wording
    return co;
}

static int bk_co_resume(lua_State *L) {
    lua_State *co = bk_getco(L);
    int r = bk_auxresume(L, co, lua_gettop(L) - 1);
    if (r < 0) {
        bk_debugger_error_moved(L, co, 0);
        lua_pushboolean(L, 0);
        lua_insert(L, -2);
        return 2;
    }
    lua_pushboolean(L, 1);
    lua_insert(L, -(r + 1));
    return r + 1;
}

// The error on L's top, raised by a `__close` handler as a coroutine closed: the `all` filter stops
// on it here, at the close (the handler's frames went with co's stack, and Lua ran no message
// handler for it). The agent reads it as a message handler's argument, the running C function's
// first slot, which the caller (close, a wrap function) has no more use for.
static void bk_close_error_shown(lua_State *L) {
    bk_runtime *rt = bk_runtime_of(L);
    if (rt == NULL || rt->hook_clients[BK_HOOK_DEBUGGER].fn == NULL) return;
    lua_copy(L, -1, 1);
    bk_debugger_exception(L, 0);
}

// Runs co's pending `__close` handlers (lua_resetthread) as a resume runs co: with the hub on it and
// co recorded as the running thread (a pause, the limits and the profiler reach a handler that
// loops); a stepIn of L's goes into them. Returns lua_resetthread's status, its error on co's top.
static int bk_close_thread(lua_State *L, lua_State *co) {
    bk_runtime *rt = bk_runtime_of(co);
    if (rt != NULL) bk_hub_prepare_any(co, rt);
    if (rt != NULL && rt->hook_clients[BK_HOOK_DEBUGGER].fn != NULL)
        bk_debugger_resume_starting(L, co, rt->hook_clients[BK_HOOK_DEBUGGER].context);
    lua_State *previous = bk_running;
    bk_runtime *previous_rt = bk_running_rt;
    bk_running = co;
    bk_running_rt = rt;
    int status = lua_resetthread(co);
    bk_running = previous;
    bk_running_rt = previous_rt;
    bk_hook_back_from(L, rt);
    if (rt != NULL && rt->hook_clients[BK_HOOK_DEBUGGER].fn != NULL)
        bk_debugger_coroutine_closed(L, co, rt->hook_clients[BK_HOOK_DEBUGGER].context);
    return status;
}

static int bk_co_auxwrap(lua_State *L) {
    lua_State *co = lua_tothread(L, lua_upvalueindex(1));
    int r = bk_auxresume(L, co, lua_gettop(L));
    if (r < 0) {
        int status = lua_status(co);
        if (status != LUA_OK && status != LUA_YIELD) {  // an error in the coroutine: close it
            status = bk_close_thread(L, co);
            lua_xmove(co, L, 1);
            if (!bk_debugger_same_error(L, -1, -2)) bk_close_error_shown(L);  // a handler raised another
        }
        if (status != LUA_ERRMEM && lua_type(L, -1) == LUA_TSTRING) {
            luaL_where(L, 1);
            lua_insert(L, -2);
            lua_concat(L, 2);
        }
        bk_debugger_error_moved(L, co, 1);
        return lua_error(L);
    }
    return r;
}

// coroutine.close(co), as Lua's (luaB_close), through bk_close_thread: co dies inside close, with
// no resume to end, and the debugger hears of it (a step in a handler goes on in L).
static int bk_co_close(lua_State *L) {
    lua_State *co = bk_getco(L);
    const char *refused = NULL;
    if (co == L) {
        refused = "running";
    } else if (lua_status(co) == LUA_OK) {
        lua_Debug probe;
        if (lua_getstack(co, 0, &probe)) refused = "normal";  // it resumed another
    }
    if (refused != NULL) return luaL_error(L, "cannot close a %s coroutine", refused);
    if (bk_close_thread(L, co) == LUA_OK) {
        lua_pushboolean(L, 1);
        return 1;
    }
    lua_xmove(co, L, 1);
    bk_close_error_shown(L);
    bk_debugger_error_moved(L, L, 0);  // returned, not raised: the same value raised later is new
    lua_pushboolean(L, 0);
    lua_insert(L, -2);
    return 2;
}

static int bk_co_wrap(lua_State *L) {
    luaL_checktype(L, 1, LUA_TFUNCTION);
    lua_State *co = lua_newthread(L);
    lua_pushvalue(L, 1);
    lua_xmove(L, co, 1);
    lua_pushcclosure(L, bk_co_auxwrap, 1);
    return 1;
}

void bk_hook_install_library(lua_State *L) {
    if (lua_getglobal(L, LUA_COLIBNAME) == LUA_TTABLE) {
        lua_pushcfunction(L, bk_co_resume);
        lua_setfield(L, -2, "resume");
        lua_pushcfunction(L, bk_co_wrap);
        lua_setfield(L, -2, "wrap");
        lua_pushcfunction(L, bk_co_close);
        lua_setfield(L, -2, "close");
    }
    lua_pop(L, 1);
    if (lua_getglobal(L, LUA_DBLIBNAME) == LUA_TTABLE) {
        lua_pushcfunction(L, bk_db_sethook);
        lua_setfield(L, -2, "sethook");
        lua_pushcfunction(L, bk_db_gethook);
        lua_setfield(L, -2, "gethook");
    }
    lua_pop(L, 1);
}
