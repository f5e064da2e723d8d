// The Lua/Swift boundary: the allocator, the trampoline every exported Swift function runs behind,
// and the protected calls Swift enters Lua through. Rule of this file: no Lua error is ever raised
// while a Swift frame is live; errors are raised here, in C, after the Swift body has returned.
// Tracebacks come from bk_luatraceback (Traceback.c): luaL_traceback naming bk functions as called.
#include "CLuaShim.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

// {====================================================================
// Allocator
// =====================================================================

// Bytes kept aside so that an allocation made while a Swift frame is live can still succeed when
// the system is out of memory: the reserve is given back, the allocation retried, and the
// trampoline whose Swift body spent it raises "not enough memory" once Swift has returned. A new
// reserve is taken then, and again before each exported function while it is missing.
#define BK_RESERVE_BYTES (1u << 20)

static void *bk_base_realloc(bk_runtime *rt, void *ptr, size_t osize, size_t nsize) {
    if (rt->base_alloc != NULL) return rt->base_alloc(rt->base_ud, ptr, osize, nsize);
    if (nsize == 0) {
        free(ptr);
        return NULL;
    }
    return realloc(ptr, nsize);
}

void *bk_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
    bk_runtime *rt = (bk_runtime *)ud;
    size_t old = ptr ? osize : 0;
    if (nsize == 0) {
        bk_base_realloc(rt, ptr, osize, 0);
        rt->bytes_in_use = rt->bytes_in_use >= old ? rt->bytes_in_use - old : 0;
        return NULL;
    }
    // Refuse growth past the cap only while Lua itself is running: an allocation failure raises
    // a Lua error, which must never start inside a Swift frame.
    if (rt->memory_limit != 0 && rt->swift_depth == 0 && nsize > old &&
        rt->bytes_in_use - old + nsize > rt->memory_limit) {
        return NULL;
    }
    void *block = bk_base_realloc(rt, ptr, osize, nsize);
    if (block == NULL && rt->swift_depth > 0 && rt->reserve != NULL) {
        free(rt->reserve);
        rt->reserve = NULL;
        rt->reserve_spent = 1;
        block = bk_base_realloc(rt, ptr, osize, nsize);
    }
    // Still NULL inside Swift: nothing is left to give back. Lua raises, and the longjmp crosses a
    // Swift frame; the trampoline's bookkeeping survives it (see bk_frame_resync), nothing else
    // can be promised. Sizes from scripts are clamped so that only a real exhaustion gets here.
    if (block == NULL) return NULL;
    rt->bytes_in_use = rt->bytes_in_use - old + nsize;
    return block;
}

void bk_runtime_init(bk_runtime *rt) {
    memset(rt, 0, sizeof *rt);
    rt->reserve = malloc(BK_RESERVE_BYTES);
}

void bk_runtime_destroy(bk_runtime *rt) {
    free(rt->reserve);
    rt->reserve = NULL;
}

/// Before Swift runs: a reserve that could not be taken again when it was spent (the system was
/// still out of memory) is taken now, so a state recovers once memory is available again.
static void bk_reserve_take(bk_runtime *rt) {
    if (__builtin_expect(rt->reserve == NULL, 0)) rt->reserve = malloc(BK_RESERVE_BYTES);
}

void bk_adopt_allocator(lua_State *L, bk_runtime *rt) {
    void *ud = NULL;
    lua_Alloc current = lua_getallocf(L, &ud);
    if (current == bk_alloc) return;
    rt->base_alloc = current;
    rt->base_ud = ud;
    rt->bytes_in_use = (size_t)lua_gc(L, LUA_GCCOUNT, 0) * 1024 + (size_t)lua_gc(L, LUA_GCCOUNTB, 0);
    rt->uses_bk_alloc = 1;
    lua_setallocf(L, bk_alloc, rt);
}

bk_runtime *bk_runtime_of(lua_State *L) {
    void *ud = NULL;
    return lua_getallocf(L, &ud) == bk_alloc ? (bk_runtime *)ud : NULL;
}

// }====================================================================

// {====================================================================
// Frames: the exported Swift functions running on this OS thread
// =====================================================================

// A stack per OS thread, innermost last. Host calls made from inside one run on its Lua thread (a
// coroutine stays on that coroutine), and the nesting depth is counted per OS thread: Lua's own
// C-stack guard counts per Lua thread, and the event loop runs each callback on a Lua thread of its
// own, so a callback that re-enters the loop (bk.run inside a timer) could nest without limit and
// overflow the stack. The records live here, not in the C frames they describe, so they stay
// readable after a longjmp skipped a frame's exit.
#define BK_MAX_NESTING 160

typedef struct bk_frame {
    bk_runtime *rt;
    lua_State *L;
    uintptr_t address;  // where the trampoline's frame is on the C stack
    int saved_swift;    // rt->swift_depth when the frame was entered
    int saved_spent;    // rt->reserve_spent when the frame was entered (its caller's)
} bk_frame;

static _Thread_local bk_frame bk_frames[BK_MAX_NESTING];
static _Thread_local int bk_frame_count = 0;

// The C stack grows down: a recorded frame at or below the address of a new frame cannot be one of
// its callers, so a longjmp skipped its exit. Dropping such records (and undoing their swift_depth)
// on entry keeps the bookkeeping exact even then; bk_pcall and bk_resume also restore the count
// they started with, which covers a longjmp their own protected call caught. A skipped frame's
// spent reserve goes with it: Lua already raised its error, and no later call may fail for it.
static void bk_frame_resync(bk_runtime *rt, uintptr_t here) {
    while (bk_frame_count > 0 && bk_frames[bk_frame_count - 1].address <= here) {
        bk_frame *dead = &bk_frames[--bk_frame_count];
        // Another state's record: its runtime may be gone; its own bk_pcall restores its depth.
        if (dead->rt == rt) {
            rt->swift_depth = dead->saved_swift;
            rt->reserve_spent = dead->saved_spent;
        }
    }
}

lua_State *bk_current_thread(bk_runtime *rt) {
    for (int i = bk_frame_count - 1; i >= 0; i--)
        if (bk_frames[i].rt == rt) return bk_frames[i].L;
    return NULL;
}

// }====================================================================

// {====================================================================
// Exported Swift functions and the trampoline
// =====================================================================

// The upvalue of every exported function. `tag` tells a real one from a userdata a script put in
// its place with debug.setupvalue (scripts can set upvalues and metatables, never raw bytes).
typedef struct bk_function {
    const void *tag;
    void *body;          // retained Swift box
    bk_runtime *rt;
    int flags;           // BK_FUNCTION_*
} bk_function;

static const char bk_function_tag = 0;
static const char *const bk_function_meta = "bk.SwiftFunction";

// One call into Lua on the hot path. A light userdata a script put there (the registry's keys are
// the only ones it can reach) points at a static or an allocation of at least a pointer's size,
// so reading its first word is safe, and it never holds the tag.
static bk_function *bk_tofunction(lua_State *L, int idx) {
    bk_function *f = (bk_function *)lua_touserdata(L, idx);
    if (__builtin_expect(f == NULL || f->tag != &bk_function_tag, 0)) return NULL;
    return f;
}

static int bk_function_gc(lua_State *L) {
    bk_function *f = bk_tofunction(L, 1);
    if (f != NULL && f->body != NULL) {
        void *body = f->body;
        f->body = NULL;
        bk_swift_release(body);
    }
    return 0;
}

// Mirrors luaL_argerror (Lua 5.4.6); differs: the function name comes from upvalue 2, not from
// pushglobalfuncname, so it is the name the function was exported under.
static int bk_raise_argument(lua_State *L, int arg, const char *extramsg, const char *fname) {
    lua_Debug ar;
    if (!lua_getstack(L, 0, &ar))
        return luaL_error(L, "bad argument #%d (%s)", arg, extramsg);
    lua_getinfo(L, "n", &ar);
    if (ar.namewhat != NULL && strcmp(ar.namewhat, "method") == 0) {
        arg--;  // do not count 'self', as luaL_argerror does
        if (arg == 0)
            return luaL_error(L, "calling '%s' on bad self (%s)", fname, extramsg);
    }
    return luaL_error(L, "bad argument #%d to '%s' (%s)", arg, fname, extramsg);
}

int bk_walk_argerror(lua_State *L, int arg, const char *extramsg) {
    const char *fname = lua_tostring(L, lua_upvalueindex(2));
    return bk_raise_argument(L, arg, extramsg, fname != NULL ? fname : "?");
}

// Mirrors luaL_typeerror (Lua 5.4.6): __name honoured, "light userdata" named. Differs: a value
// whose __name is the expected one yet is not one (a FILE* given bk.Timer's metatable) is named
// by its type, never "X expected, got X".
const char *bk_pushtypeerror(lua_State *L, int arg, const char *expected, const char *fname) {
    (void)fname;
    const char *typearg;
    int named = luaL_getmetafield(L, arg, "__name");  // pushes nothing when absent
    int posing = named == LUA_TSTRING && strcmp(lua_tostring(L, -1), expected) == 0;
    if (named == LUA_TSTRING && !posing)
        typearg = lua_tostring(L, -1);
    else if (lua_type(L, arg) == LUA_TLIGHTUSERDATA)
        typearg = "light userdata";
    else
        typearg = luaL_typename(L, arg);
    const char *msg = posing ? lua_pushfstring(L, "%s expected, got a %s named %s that is not one", expected, typearg, expected)
                             : lua_pushfstring(L, "%s expected, got %s", expected, typearg);
    if (named != LUA_TNIL) lua_remove(L, -2);
    return msg;
}

// The continuation of BK_CONTINUE_CALL: the results above the base are the function's own.
static int bk_continued_call_done(lua_State *L, int status, lua_KContext base) {
    (void)status;
    return lua_gettop(L) - (int)base;
}

// BK_CONTINUE_CALL: stack ..., f, args..., count.
static int bk_continue_call(lua_State *L) {
    int nargs = (int)lua_tointeger(L, -1);
    lua_pop(L, 1);
    int base = lua_gettop(L) - nargs - 1;
    if (nargs < 0 || base < 0) return luaL_error(L, "bk: bad continued call");
    lua_callk(L, nargs, LUA_MULTRET, (lua_KContext)base, bk_continued_call_done);
    return bk_continued_call_done(L, LUA_OK, (lua_KContext)base);
}

int bk_trampoline(lua_State *L) {
    bk_function *f = bk_tofunction(L, lua_upvalueindex(1));
    if (f == NULL) return luaL_error(L, "bk: not a bridge function (its upvalue was replaced)");
    // Its body is released only by its own finalizer: not a life flag of the state (a finalizer
    // run in the same cycle may still call a finalized function), so it is checked apart.
    if (f->body == NULL)
        return luaL_error(L, "cannot call '%s' while the Lua state is closing", lua_tostring(L, lua_upvalueindex(2)));
    bk_runtime *rt = f->rt;
    if (bk_runtime_life(rt) != BK_LIFE_OPEN && !(f->flags & BK_FUNCTION_AT_CLOSE))
        return luaL_error(L, "cannot call '%s' while the Lua state is closing", lua_tostring(L, lua_upvalueindex(2)));
    // This frame's place on the real C stack (a local's address may be on AddressSanitizer's fake
    // stack, which is not ordered).
    uintptr_t here = (uintptr_t)__builtin_frame_address(0);
    bk_frame_resync(rt, here);
    if (bk_frame_count >= BK_MAX_NESTING) {
        if (!(f->flags & BK_FUNCTION_AT_CLOSE))
            return luaL_error(L, "C stack overflow (bk calls nested too deeply)");
        // A finalizer collected this deep still runs (it only releases its Swift object and never
        // raises or calls Lua): refusing it would leak the object and all it holds.
        int saved = rt->swift_depth;
        rt->swift_depth++;
        int released = bk_swift_call(L, f->body, rt);
        rt->swift_depth = saved;
        return released > 0 ? released : 0;
    }
    int index = bk_frame_count++;
    bk_frames[index] = (bk_frame){
        .rt = rt, .L = L, .address = here, .saved_swift = rt->swift_depth, .saved_spent = rt->reserve_spent,
    };
    rt->swift_depth++;
    // Each frame learns only of the reserve it spent itself (a callee's was raised by the callee).
    rt->reserve_spent = 0;
    bk_reserve_take(rt);
    // The profiler's sampler reads which exported function runs (relaxed: it only tells Lua from
    // Swift); samples of it are taken once it has returned, with its frame still on the stack.
    const void *outer_swift = rt->profiling.swift;
    __atomic_store_n(&rt->profiling.swift, f, __ATOMIC_RELAXED);
    int n = bk_swift_call(L, f->body, rt);
    __atomic_store_n(&rt->profiling.swift, outer_swift, __ATOMIC_RELAXED);
    if (__builtin_expect(rt->profiling.target != NULL, 0)) bk_profiler_swift_returned(L, &rt->profiling, f);
    rt->swift_depth = bk_frames[index].saved_swift;
    int spent = rt->reserve_spent;
    rt->reserve_spent = bk_frames[index].saved_spent;
    bk_frame_count = index;
    // Swift has returned: from here on raising is safe.
    int over = rt->memory_limit != 0 && rt->swift_depth == 0 && rt->bytes_in_use > rt->memory_limit;
    if (spent) bk_reserve_take(rt);
    if (spent || over) {
        lua_settop(L, 0);
        rt->swift_depth++;  // the message itself must be allocatable
        lua_pushliteral(L, "not enough memory");
        rt->swift_depth--;
        return lua_error(L);
    }
    if (n >= 0) return n;  // results
    switch ((bk_status)n) {
        case BK_CONTINUE_WALK: return bk_walk_start(L);  // Swift is gone: the walk may raise and yield
        case BK_CONTINUE_CALL: return bk_continue_call(L);
        case BK_RAISE_MESSAGE: {
            luaL_where(L, 1);
            lua_insert(L, -2);
            lua_concat(L, 2);
            return lua_error(L);
        }
        case BK_RAISE_ARGUMENT: {
            int arg = (int)lua_tointeger(L, -2);
            const char *extramsg = lua_tostring(L, -1);
            return bk_raise_argument(L, arg, extramsg ? extramsg : "?", lua_tostring(L, lua_upvalueindex(2)));
        }
        case BK_RAISE_TYPE: {
            // Stack: ..., original top, arg index, expected type name. Restore the arguments first
            // so the actual type of a missing argument reads "no value".
            char expected[128];
            int original = (int)lua_tointeger(L, -3);
            int arg = (int)lua_tointeger(L, -2);
            const char *name = lua_tostring(L, -1);
            snprintf(expected, sizeof expected, "%s", name ? name : "?");
            lua_settop(L, original);
            const char *fname = lua_tostring(L, lua_upvalueindex(2));
            const char *msg = bk_pushtypeerror(L, arg, expected, fname);
            return bk_raise_argument(L, arg, msg, fname);
        }
        case BK_RAISE_VALUE:
        default:
            return lua_error(L);
    }
}

void bk_pushswiftfunction(lua_State *L, bk_runtime *rt, void *body, const char *name, int flags) {
    bk_function *f = (bk_function *)lua_newuserdatauv(L, sizeof(bk_function), 0);
    f->tag = &bk_function_tag;
    f->body = body;
    f->rt = rt;
    f->flags = flags;
    if (luaL_newmetatable(L, bk_function_meta)) {
        lua_pushcfunction(L, bk_function_gc);
        lua_setfield(L, -2, "__gc");
        lua_pushliteral(L, "bk.SwiftFunction");
        lua_setfield(L, -2, "__name");
        lua_pushboolean(L, 0);
        lua_setfield(L, -2, "__metatable");
    }
    lua_setmetatable(L, -2);
    lua_pushstring(L, name);
    lua_pushcclosure(L, bk_trampoline, 2);
}

// }====================================================================

// {====================================================================
// Calling into Lua
// =====================================================================

// Lua code called from Swift runs under the memory cap again (depth 0); on the way back the depth
// and the frame records are restored as they were (a longjmp this call caught may have skipped
// frames' exits).
typedef struct bk_lua_entry {
    bk_runtime *rt;
    const void *swift;  // the exported function Lua was entered from (the profiler's)
    lua_State *L;
    lua_State *running;  // the Lua thread that ran on this OS thread before (bk_hook_enter)
    int frames;
    int saved_swift;
    int saved_spent;  // the calling Swift frame's spent reserve (a skipped callee's is dropped)
} bk_lua_entry;

static bk_lua_entry bk_enter_lua(lua_State *L) {
    bk_lua_entry entry = { bk_runtime_of(L), NULL, L, NULL, bk_frame_count, 0, 0 };
    if (entry.rt != NULL) {
        entry.running = bk_hook_enter(L);
        bk_runtime_profiling *profiling = &entry.rt->profiling;
        entry.swift = profiling->swift;
        __atomic_store_n(&profiling->swift, NULL, __ATOMIC_RELAXED);
        __atomic_store_n(&profiling->lua_depth, profiling->lua_depth + 1, __ATOMIC_RELAXED);
        entry.saved_swift = entry.rt->swift_depth;
        entry.saved_spent = entry.rt->reserve_spent;
        entry.rt->swift_depth = 0;
        entry.rt->pcall_depth++;
    }
    return entry;
}

static void bk_leave_lua(bk_lua_entry entry) {
    bk_frame_count = entry.frames;
    if (entry.rt != NULL) {
        // A Lua sample still untaken when a protected call made inside an exported function ends
        // was CPU time spent in C below it (bk.isTransferable's walk): that function's.
        if (__builtin_expect(entry.rt->profiling.target != NULL, 0) && entry.swift != NULL &&
            entry.running != NULL && bk_runtime_of(entry.running) == entry.rt)
            bk_profiler_call_returned(entry.running, &entry.rt->profiling);
        entry.rt->swift_depth = entry.saved_swift;
        entry.rt->reserve_spent = entry.saved_spent;
        entry.rt->pcall_depth--;
        bk_runtime_profiling *profiling = &entry.rt->profiling;
        __atomic_store_n(&profiling->lua_depth, profiling->lua_depth - 1, __ATOMIC_RELAXED);
        __atomic_store_n(&profiling->swift, entry.swift, __ATOMIC_RELAXED);
        bk_hook_leave(entry.L, entry.running);
        // The thread that called out to Swift goes on (a wait on the loop that ran this block):
        // the debugger may have got breakpoints meanwhile, told only to the thread that ran then.
        if (entry.running != NULL && entry.running != entry.L && bk_runtime_of(entry.running) == entry.rt)
            bk_hook_resumed(entry.running);
    }
}

int bk_pcall(lua_State *L, int nargs, int nresults, int msgh) {
    bk_lua_entry entry = bk_enter_lua(L);
    int status = lua_pcallk(L, nargs, nresults, msgh, 0, NULL);
    bk_leave_lua(entry);
    return status;
}

int bk_resume(lua_State *co, lua_State *from, int nargs, int *nresults) {
    bk_hook_prepare(co);  // a coroutine made before a hook client attached gets the hub
    bk_lua_entry entry = bk_enter_lua(co);
    int status = lua_resume(co, from, nargs, nresults);
    bk_leave_lua(entry);
    bk_hook_resumed(from);  // `from` goes on: the debugger looks at its running function again
    return status;
}

// }====================================================================

// {====================================================================
// Error values and tracebacks
// =====================================================================

// A block's error leaves the helper unchanged (as from pcall or table.sort); its traceback is kept
// on the side, for whoever reports the error later (bk.onError, bklua's top level).
static const void *const bk_last_error_key = NULL;      // registry[&key] = the error value last recorded
static const void *const bk_last_traceback_key = NULL;  // registry[&key] = its traceback (a string)
// registry[&key] = the awaiting thread while that traceback ends where a task raised the error and
// an await raised it again: the first handler or coroutine record of that thread that meets it
// appends the await's frames (still on the stack then), so an await pays nothing unless the error
// is reported. Met on another thread, the record is stale (the await's error was caught): dropped.
static const void *const bk_last_awaited_key = NULL;

static void bk_clear_awaited(lua_State *L) {
    // Only when set: clearing a key that exists allocates nothing (the reporters rely on that).
    int set = lua_rawgetp(L, LUA_REGISTRYINDEX, &bk_last_awaited_key) != LUA_TNIL;
    lua_pop(L, 1);
    if (!set) return;
    lua_pushnil(L);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &bk_last_awaited_key);
}

// The recorded error was raised again by an await: its traceback gets "(awaited)" and the frames
// of L1 from `level` (the await's, without the engine's), once. 0: no await pending; 1: completed;
// -1: an await of another thread was pending (a stale record: the caller records afresh).
static int bk_complete_awaited(lua_State *L, lua_State *L1, int level) {
    if (lua_rawgetp(L, LUA_REGISTRYINDEX, &bk_last_awaited_key) != LUA_TTHREAD) {
        lua_pop(L, 1);
        return 0;
    }
    lua_State *awaiting = lua_tothread(L, -1);
    lua_pop(L, 1);
    bk_clear_awaited(L);
    if (awaiting != L1) return -1;
    bk_luatraceback(L, L1, NULL, level);
    const char *here = lua_tostring(L, -1);
    const char *header = "stack traceback:";
    if (here != NULL && strncmp(here, header, strlen(header)) == 0) here += strlen(header);
    // Nothing left but the engine's frames (a tail call into bk.await): nothing to add.
    if (here != NULL && *here != '\0' &&
        lua_rawgetp(L, LUA_REGISTRYINDEX, &bk_last_traceback_key) == LUA_TSTRING) {
        lua_pushliteral(L, "\n\t(awaited)");
        lua_pushstring(L, here);
        lua_concat(L, 3);
        lua_rawsetp(L, LUA_REGISTRYINDEX, &bk_last_traceback_key);
    } else if (here != NULL && *here != '\0') {
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return 1;
}

static void bk_pushtraceback(lua_State *L, int idx) {
    idx = lua_absindex(L, idx);
    if (lua_type(L, idx) == LUA_TSTRING) {
        bk_luatraceback(L, L, lua_tostring(L, idx), 1);
    } else {
        bk_pusherrormessage(L, idx);  // as lua.c: __tostring, else "(error object is a X value)"
        bk_luatraceback(L, L, lua_tostring(L, -1), 1);
        lua_remove(L, -2);
    }
}

static int bk_record(lua_State *L);

int bk_recordtraceback(lua_State *L) {
    lua_settop(L, 1);
    bk_debugger_exception(L, 0);  // a debugger's "all" exception breakpoint: a block's error
    return bk_record(L);
}

int bk_hostcalltraceback(lua_State *L) {
    lua_settop(L, 1);
    bk_debugger_exception(L, 1);  // a debugger's "uncaught" exception breakpoint: nothing in Lua caught it
    return bk_record(L);
}

static int bk_record(lua_State *L) {
    if (lua_rawgetp(L, LUA_REGISTRYINDEX, &bk_last_error_key) != LUA_TNIL && lua_rawequal(L, -1, 1)) {
        lua_settop(L, 1);  // already recorded deeper down (an error crossing several helpers)
        if (bk_complete_awaited(L, L, 2) >= 0) return 1;  // 2: above the `error` that raised
    }
    lua_settop(L, 1);
    bk_clear_awaited(L);
    bk_pushtraceback(L, 1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &bk_last_traceback_key);
    lua_pushvalue(L, 1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &bk_last_error_key);
    lua_settop(L, 1);
    return 1;
}

int bk_recordcoroutinetraceback(lua_State *L) {
    lua_State *co = lua_tothread(L, 1);
    if (co == NULL || lua_gettop(L) < 2) return 0;
    if (lua_rawgetp(L, LUA_REGISTRYINDEX, &bk_last_error_key) != LUA_TNIL && lua_rawequal(L, -1, 2)) {
        lua_pop(L, 1);  // already recorded deeper down (a helper's handler inside the task)
        if (bk_complete_awaited(L, co, 1) >= 0) return 0;  // 1: above the `error` that raised
    } else {
        lua_pop(L, 1);
    }
    bk_clear_awaited(L);
    // Level 0 of a coroutine that is not running is the function that raised.
    if (lua_type(L, 2) == LUA_TSTRING) {
        bk_luatraceback(L, co, lua_tostring(L, 2), 0);
    } else {
        bk_pusherrormessage(L, 2);
        bk_luatraceback(L, co, lua_tostring(L, -1), 0);
        lua_remove(L, -2);
    }
    lua_rawsetp(L, LUA_REGISTRYINDEX, &bk_last_traceback_key);
    lua_pushvalue(L, 2);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &bk_last_error_key);
    return 0;
}

int bk_recordawaitedtraceback(lua_State *L) {
    // (err, traced): traced is the report made where a task raised err, in the recorded form
    // ("message\nstack traceback:..."); the await's frames are added once it is reported.
    if (lua_type(L, 2) != LUA_TSTRING) return 0;
    lua_settop(L, 2);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &bk_last_traceback_key);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &bk_last_error_key);
    lua_pushthread(L);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &bk_last_awaited_key);
    return 0;
}

static int bk_traceback_text(lua_State *L);

int bk_traceback(lua_State *L) {
    if (lua_gettop(L) >= 1) {
        lua_settop(L, 1);
        bk_debugger_exception(L, 1);  // a debugger's "uncaught" exception breakpoint
    }
    return bk_traceback_text(L);
}

// The message handler's text, for a handler and for a report made later (bk_errorreport: no error
// is being raised then, so no debugger stops).
static int bk_traceback_text(lua_State *L) {
    const char *msg = lua_tostring(L, 1);
    if (msg == NULL) {
        // Not a string: keep the original value so callers can rethrow it unchanged; its
        // traceback goes on the side (unless recorded deeper down), where a report finds it.
        lua_settop(L, 1);
        return bk_record(L);
    }
    if (strstr(msg, "\nstack traceback:") != NULL) return 1;  // already traced deeper down
    // Recorded where a block raised it, deeper than here: that traceback is the useful one (with
    // the await's frames, still on the stack here, when an await raised it again).
    if (lua_rawgetp(L, LUA_REGISTRYINDEX, &bk_last_error_key) != LUA_TNIL && lua_rawequal(L, -1, 1)) {
        lua_settop(L, 1);
        if (bk_complete_awaited(L, L, 2) >= 0 &&
            lua_rawgetp(L, LUA_REGISTRYINDEX, &bk_last_traceback_key) == LUA_TSTRING) {
            lua_pushnil(L);
            lua_rawsetp(L, LUA_REGISTRYINDEX, &bk_last_error_key);
            lua_pushnil(L);
            lua_rawsetp(L, LUA_REGISTRYINDEX, &bk_last_traceback_key);
            return 1;
        }
    }
    lua_settop(L, 1);
    bk_luatraceback(L, L, msg, 1);
    return 1;
}

static void bk_pusherrortext(lua_State *L, int idx, int clear) {
    idx = lua_absindex(L, idx);
    {
        int recorded = lua_rawgetp(L, LUA_REGISTRYINDEX, &bk_last_error_key) != LUA_TNIL && lua_rawequal(L, -1, idx);
        lua_pop(L, 1);
        if (recorded) {
            if (lua_rawgetp(L, LUA_REGISTRYINDEX, &bk_last_traceback_key) == LUA_TSTRING) {
                if (clear) {
                    // Clearing keys that exist allocates nothing.
                    lua_pushnil(L);
                    lua_rawsetp(L, LUA_REGISTRYINDEX, &bk_last_error_key);
                    lua_pushnil(L);
                    lua_rawsetp(L, LUA_REGISTRYINDEX, &bk_last_traceback_key);
                    bk_clear_awaited(L);
                }
                return;
            }
            lua_pop(L, 1);
        }
    }
    bk_pusherrormessage(L, idx);  // a string as it is
}

void bk_pusherrorreport(lua_State *L, int idx) {
    bk_debugger_error_reported(L);
    bk_pusherrortext(L, idx, 1);
}

void bk_pusherrordescription(lua_State *L, int idx) { bk_pusherrortext(L, idx, 0); }

int bk_errorreport(lua_State *L) {
    lua_settop(L, 1);
    bk_debugger_error_reported(L);
    if (lua_type(L, 1) == LUA_TSTRING) return bk_traceback_text(L);
    bk_pusherrorreport(L, 1);
    return 1;
}

static int bk_errormessage_protected(lua_State *L) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) return 1;
    lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    return 1;
}

void bk_pusherrormessage(lua_State *L, int idx) {
    idx = lua_absindex(L, idx);
    if (lua_type(L, idx) == LUA_TSTRING) {
        lua_pushvalue(L, idx);
        return;
    }
    lua_pushcfunction(L, bk_errormessage_protected);
    lua_pushvalue(L, idx);
    if (bk_pcall(L, 1, 1, 0) != LUA_OK || lua_type(L, -1) != LUA_TSTRING) {
        lua_pop(L, 1);
        lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, idx));
    }
}

// os.exit(code, true) closes the state with lua_close from inside Lua, bypassing the host's close:
// this wrapper marks the runtime closing first, so finalizers see bk refuse (rule 10) instead of
// making bridge objects that a closing state never finalizes (their Swift halves would leak).
static int bk_os_exit(lua_State *L) {
    bk_runtime *rt = bk_runtime_of(L);
    if (rt != NULL && lua_toboolean(L, 2)) bk_runtime_advance_life(rt, BK_LIFE_CLOSING);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

int bk_wrap_os_exit(lua_State *L) {
    int top = lua_gettop(L);
    lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
    // Raw reads and writes: a script's metatable on _G or os cannot make this raise.
    if (lua_type(L, -1) == LUA_TTABLE && (lua_pushliteral(L, "os"), lua_rawget(L, -2)) == LUA_TTABLE &&
        (lua_pushliteral(L, "exit"), lua_rawget(L, -2)) == LUA_TFUNCTION && lua_tocfunction(L, -1) != bk_os_exit) {
        lua_pushcclosure(L, bk_os_exit, 1);
        lua_pushliteral(L, "exit");
        lua_insert(L, -2);
        lua_rawset(L, -3);
    }
    lua_settop(L, top);
    return 0;
}

static int bk_openlibs_protected(lua_State *L) {
    luaL_openlibs(L);
    bk_wrap_os_exit(L);
    bk_hook_install_library(L);
    return 0;
}

int bk_openlibs(lua_State *L) {
    lua_pushcfunction(L, bk_openlibs_protected);
    return bk_pcall(L, 0, 0, 0);
}

// }====================================================================
