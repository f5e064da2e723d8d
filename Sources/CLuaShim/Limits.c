// Sandbox limits: an instruction budget, a wall-clock deadline and an interrupt flag, enforced at
// the count events of the hook hub (Hook.c), plus the safe library set. The hub raises from C while
// Lua code runs (a hook only fires between Lua instructions), so no Swift frame is ever between the
// raise and its pcall.
#include "CLuaShim.h"
#include <pthread.h>
#include <string.h>
#include <time.h>

// Instructions between two count events of the limits: small enough to stop a runaway loop
// promptly, large enough that the clock read per step costs nothing measurable. (The count hook
// itself is what costs: while it is on, every instruction goes through Lua's hook check.)
#define BK_LIMITS_STEP 1000

// Time spent stopped in a debugger, by any state of this process: the deadlines' clock stands
// still while a stop lasts, so neither the stopped state nor one that waits on it (the main code
// awaiting a stopped worker) runs out of time while the user looks. Stops may overlap (workers).
static pthread_mutex_t bk_hold_lock = PTHREAD_MUTEX_INITIALIZER;
static int bk_hold_active = 0;        // stops in progress (written under the lock)
static long long bk_hold_since = 0;   // the monotonic clock (ns) when the first of them began
static long long bk_held_ns = 0;      // the length of the stops that ended

static long long bk_monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void bk_limits_hold(int stopped) {
    pthread_mutex_lock(&bk_hold_lock);
    if (stopped) {
        if (bk_hold_active == 0) __atomic_store_n(&bk_hold_since, bk_monotonic_ns(), __ATOMIC_RELAXED);
        __atomic_store_n(&bk_hold_active, bk_hold_active + 1, __ATOMIC_RELEASE);
    } else if (bk_hold_active > 0) {
        if (bk_hold_active == 1)
            __atomic_fetch_add(&bk_held_ns, bk_monotonic_ns() - bk_hold_since, __ATOMIC_RELAXED);
        __atomic_store_n(&bk_hold_active, bk_hold_active - 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&bk_hold_lock);
}

// The deadlines' clock: monotonic seconds, less the time stopped (standing still during a stop).
static double bk_now(void) {
    long long now = __atomic_load_n(&bk_hold_active, __ATOMIC_ACQUIRE) > 0
                        ? __atomic_load_n(&bk_hold_since, __ATOMIC_RELAXED) : bk_monotonic_ns();
    return (double)(now - __atomic_load_n(&bk_held_ns, __ATOMIC_RELAXED)) / 1e9;
}

int bk_limits_step(const bk_runtime *rt) {
    if (rt->instruction_limit > 0 && rt->instruction_limit < BK_LIMITS_STEP)
        return (int)rt->instruction_limit;
    return BK_LIMITS_STEP;
}

void bk_limits_count(lua_State *L, bk_runtime *rt) {
    if (rt->tripped == NULL) {
        rt->instructions_used += lua_gethookcount(L);
        if (__atomic_exchange_n(&rt->interrupted, 0, __ATOMIC_RELAXED))
            rt->tripped = "interrupted";  // consumed here, not by a reset: none is ever dropped
        else if (rt->instruction_limit > 0 && rt->instructions_used > rt->instruction_limit)
            rt->tripped = "instruction limit exceeded";
        else if (rt->deadline > 0 && bk_now() > rt->deadline)
            rt->tripped = "time limit exceeded";
        else
            return;
    }
    // Tripped: from now on every instruction of this thread raises (the hub counts by 1 while
    // `tripped` is set), so a script that catches the error with pcall cannot go on running
    // (other threads trip at their own next hook).
    bk_hook_refresh(L);
    luaL_where(L, 0);  // level 0 inside a hook is the Lua function that was running
    lua_pushstring(L, rt->tripped);
    lua_concat(L, 2);
    lua_error(L);
}

static int bk_safe_xpcall(lua_State *L);

// The global xpcall becomes bk_safe_xpcall (once), so a looping message handler cannot outlive a
// limit outside the sandbox either. Raw access: the globals' metatable is the script's.
static int bk_guard_xpcall(lua_State *L) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
    lua_pushliteral(L, "xpcall");
    lua_rawget(L, -2);
    lua_CFunction current = lua_tocfunction(L, -1);
    // Guarded already: ours, or the debugger's for `all` (a pool state attaches for each chunk).
    if (current == NULL || current == bk_safe_xpcall || bk_debugger_owns_protected_call(current)) return 0;
    lua_pushliteral(L, "xpcall");
    lua_pushcfunction(L, bk_safe_xpcall);  // Lua's rebuilt: it needs no reference to the one it replaces
    lua_rawset(L, -4);
    return 0;
}

void bk_guard_message_handlers(lua_State *L) {
    lua_pushcfunction(L, bk_guard_xpcall);
    if (bk_pcall(L, 0, 0, 0) != LUA_OK) lua_pop(L, 1);  // out of memory: xpcall stays Lua's
}

void bk_sethooks(lua_State *L) {
    bk_runtime *rt = bk_runtime_of(L);
    if (rt == NULL) return;
    __atomic_store_n(&rt->limits_hooked, 1, __ATOMIC_RELAXED);
    bk_hook_refresh(L);
    bk_guard_message_handlers(L);
}

void bk_reset_limits(lua_State *L, bk_runtime *rt) {
    rt->instructions_used = 0;
    rt->tripped = NULL;
    // `interrupted` is left alone: an interrupt asked for just before this run stops this run.
    rt->deadline = rt->time_limit > 0 ? bk_now() + rt->time_limit : 0;
    bk_hook_refresh(L);  // a tripped thread counted by 1
}

void bk_interrupt(bk_runtime *rt) {
    __atomic_store_n(&rt->interrupted, 1, __ATOMIC_RELAXED);
}

void bk_interrupt_installing_hook(lua_State *L, bk_runtime *rt) {
    bk_interrupt(rt);
    __atomic_store_n(&rt->limits_hooked, 1, __ATOMIC_RELAXED);
    bk_hook_count_soon_async(L);
}

const char *bk_stop_requested(bk_runtime *rt) {
    if (rt->tripped != NULL) return rt->tripped;
    if (__atomic_load_n(&rt->interrupted, __ATOMIC_RELAXED)) return "interrupted";
    if (rt->deadline > 0 && bk_now() > rt->deadline) return "time limit exceeded";
    return NULL;
}

double bk_limits_wait_cap(bk_runtime *rt, lua_State *L) {
    (void)L;
    if (!__atomic_load_n(&rt->limits_hooked, __ATOMIC_RELAXED)) return -1;
    double cap = 0.02;
    if (rt->deadline > 0) {
        double left = rt->deadline - bk_now();
        if (left < cap) cap = left > 0 ? left : 0;
    }
    return cap;
}

void bk_check_limits_soon(lua_State *L) {
    bk_hook_count_soon(L);
}

// MARK: - Safe libraries

// load(chunk [, chunkname [, mode [, env]]]) that never accepts binary chunks: 'b' is dropped from
// the mode (default "t"), so precompiled bytecode, which Lua does not verify, cannot be loaded.
static int bk_safe_load(lua_State *L) {
    int n = lua_gettop(L);
    if (n > 4) lua_settop(L, n = 4);
    if (n < 3) lua_settop(L, 3);  // env (4) stays absent when absent: load treats nil and none apart
    char mode[8] = "t";
    if (!lua_isnil(L, 3)) {
        const char *given = luaL_checkstring(L, 3);
        size_t k = 0;
        for (; *given != '\0' && k + 1 < sizeof mode; given++)
            if (*given != 'b') mode[k++] = *given;
        mode[k] = '\0';
    }
    lua_pushstring(L, mode);
    lua_replace(L, 3);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

// setmetatable that refuses __gc: finalizers run with hooks off, so a looping one could not be
// stopped by any limit.
static int bk_safe_setmetatable(lua_State *L) {
    if (lua_type(L, 2) == LUA_TTABLE) {
        lua_pushliteral(L, "__gc");
        int has = lua_rawget(L, 2) != LUA_TNIL;
        lua_pop(L, 1);
        if (has) return luaL_argerror(L, 2, "__gc metamethods are not allowed in a sandbox");
    }
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

int bk_limit_tripped(const bk_runtime *rt) {
    return rt != NULL && (rt->tripped != NULL || rt->evaluation_tripped);
}

// xpcall whose message handler is skipped once a limit (or a debugger's evaluation) has tripped. The
// error of a hook is raised while hooks are off, and the handler runs before the stack unwinds: a
// looping handler could otherwise never be stopped.
static int bk_guarded_handler(lua_State *L) {
    bk_runtime *rt = bk_runtime_of(L);
    if (bk_limit_tripped(rt)) {
        lua_settop(L, 1);
        return 1;
    }
    int n = lua_gettop(L);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, n, 1);
    return 1;
}

// As Lua's finishpcall: `extra` slots (the handler, and true) lie below the results.
static int bk_finish_xpcall(lua_State *L, int status, lua_KContext extra) {
    if (status != LUA_OK && status != LUA_YIELD) {
        lua_pushboolean(L, 0);
        lua_pushvalue(L, -2);
        return 2;
    }
    return lua_gettop(L) - (int)extra;
}

// As Lua's luaB_xpcall, one C level as it is (xpcalls nest as deep, and `error` levels count the
// same). A Lua handler runs through bk_guarded_handler; a C one (debug.traceback) runs no Lua code
// that could loop, and is called as it is, so its traceback is Lua's own.
static int bk_safe_xpcall(lua_State *L) {
    int n = lua_gettop(L);
    luaL_checktype(L, 2, LUA_TFUNCTION);
    if (!lua_iscfunction(L, 2)) {
        lua_pushvalue(L, 2);
        lua_pushcclosure(L, bk_guarded_handler, 1);
        lua_replace(L, 2);  // f, handler, args...
    }
    lua_pushboolean(L, 1);  // the first result when no error
    lua_pushvalue(L, 1);
    lua_rotate(L, 3, 2);    // handler, true, f, args... from slot 2
    int status = lua_pcallk(L, n - 2, LUA_MULTRET, 2, 2, bk_finish_xpcall);
    return bk_finish_xpcall(L, status, 2);
}

static void bk_wrap_global(lua_State *L, const char *name, lua_CFunction wrapper) {
    lua_getglobal(L, name);
    lua_pushcclosure(L, wrapper, 1);
    lua_setglobal(L, name);
}

static void bk_open(lua_State *L, const char *name, lua_CFunction open) {
    luaL_requiref(L, name, open, 1);
    lua_pop(L, 1);
}

static int bk_opensafelibs_protected(lua_State *L) {
    bk_open(L, LUA_GNAME, luaopen_base);
    lua_pushnil(L);
    lua_setglobal(L, "dofile");
    lua_pushnil(L);
    lua_setglobal(L, "loadfile");
    bk_wrap_global(L, "load", bk_safe_load);
    bk_open(L, LUA_STRLIBNAME, luaopen_string);
    bk_open(L, LUA_TABLIBNAME, luaopen_table);
    bk_open(L, LUA_MATHLIBNAME, luaopen_math);
    bk_open(L, LUA_UTF8LIBNAME, luaopen_utf8);
    bk_open(L, LUA_COLIBNAME, luaopen_coroutine);

    // os: reading the clock only. The full table is never registered, so require "os" cannot reach it.
    static const char *const os_allowed[] = {"time", "clock", "date", "difftime", NULL};
    lua_pushcfunction(L, luaopen_os);
    lua_call(L, 0, 1);
    lua_createtable(L, 0, 4);
    for (int i = 0; os_allowed[i] != NULL; i++) {
        lua_getfield(L, -2, os_allowed[i]);
        lua_setfield(L, -2, os_allowed[i]);
    }
    luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
    lua_pushvalue(L, -2);
    lua_setfield(L, -2, LUA_OSLIBNAME);
    lua_pop(L, 1);
    lua_setglobal(L, LUA_OSLIBNAME);
    lua_pop(L, 1);

    // package/require: modules already loaded (bk) or in package.preload; no files, no C libraries.
    luaL_requiref(L, LUA_LOADLIBNAME, luaopen_package, 1);
    lua_pushnil(L);
    lua_setfield(L, -2, "loadlib");
    lua_pushnil(L);
    lua_setfield(L, -2, "searchpath");
    lua_pushliteral(L, "");
    lua_setfield(L, -2, "path");
    lua_pushliteral(L, "");
    lua_setfield(L, -2, "cpath");
    lua_getfield(L, -1, "searchers");
    for (lua_Integer i = (lua_Integer)lua_rawlen(L, -1); i > 1; i--) {
        lua_pushnil(L);
        lua_rawseti(L, -2, i);
    }
    lua_pop(L, 2);

    bk_wrap_global(L, "setmetatable", bk_safe_setmetatable);
    lua_pushcfunction(L, bk_safe_xpcall);
    lua_setglobal(L, "xpcall");
    bk_hook_install_library(L);
    return 0;
}

int bk_opensafelibs(lua_State *L) {
    bk_runtime *rt = bk_runtime_of(L);
    if (rt != NULL) rt->safe_libraries = 1;  // workers this state starts get the same set
    lua_pushcfunction(L, bk_opensafelibs_protected);
    return bk_pcall(L, 0, 0, 0);
}
