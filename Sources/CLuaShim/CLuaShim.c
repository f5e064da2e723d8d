#define _GNU_SOURCE  // dladdr
#include "CLuaShim.h"
#include "CLuaShimTraceback.h"
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

// MARK: - Allocator

void *bk_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
    bk_runtime *rt = (bk_runtime *)ud;
    size_t old = ptr ? osize : 0;
    if (nsize == 0) {
        free(ptr);
        rt->bytes_in_use -= old;
        return NULL;
    }
    // Refuse growth past the cap only while Lua itself is running: an allocation failure raises
    // a Lua error, which must never start inside a Swift frame.
    if (rt->memory_limit != 0 && rt->swift_depth == 0 && nsize > old &&
        rt->bytes_in_use - old + nsize > rt->memory_limit) {
        return NULL;
    }
    void *block = realloc(ptr, nsize);
    if (block == NULL) return NULL;
    rt->bytes_in_use = rt->bytes_in_use - old + nsize;
    return block;
}

// MARK: - Exported Swift functions

typedef struct bk_function {
    void *body;          // retained Swift box
    bk_runtime *rt;
} bk_function;

static const char *const bk_function_meta = "bk.SwiftFunction";

static int bk_function_gc(lua_State *L) {
    bk_function *f = (bk_function *)lua_touserdata(L, 1);
    if (f != NULL && f->body != NULL) {
        void *body = f->body;
        f->body = NULL;
        bk_swift_release(body);
    }
    return 0;
}

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

const char *bk_pushtypeerror(lua_State *L, int arg, const char *expected, const char *fname) {
    (void)fname;
    const char *typearg;
    int named = luaL_getmetafield(L, arg, "__name");  // pushes nothing when absent
    if (named == LUA_TSTRING)
        typearg = lua_tostring(L, -1);
    else if (lua_type(L, arg) == LUA_TLIGHTUSERDATA)
        typearg = "light userdata";
    else
        typearg = luaL_typename(L, arg);
    const char *msg = lua_pushfstring(L, "%s expected, got %s", expected, typearg);
    if (named != LUA_TNIL) lua_remove(L, -2);
    return msg;
}

// The exported Swift functions running on this OS thread, innermost first: host calls made from
// inside one run on its Lua thread (a coroutine stays on that coroutine).
typedef struct bk_frame {
    bk_runtime *rt;
    lua_State *L;
    struct bk_frame *outer;
} bk_frame;

static _Thread_local bk_frame *bk_innermost_frame = NULL;

// Exported functions nested on this OS thread. Lua's own C-stack guard counts calls per Lua
// thread, and the event loop runs each callback on a Lua thread of its own, so a callback that
// re-enters the loop (bk.run inside a timer) could nest without limit and overflow the OS stack.
// Counted per OS thread, which is what owns the stack.
#define BK_MAX_NESTING 160
static _Thread_local int bk_nesting = 0;

lua_State *bk_current_thread(bk_runtime *rt) {
    for (bk_frame *frame = bk_innermost_frame; frame != NULL; frame = frame->outer)
        if (frame->rt == rt) return frame->L;
    return NULL;
}

int bk_trampoline(lua_State *L) {
    bk_function *f = (bk_function *)lua_touserdata(L, lua_upvalueindex(1));
    bk_runtime *rt = f->rt;
    if (bk_nesting >= BK_MAX_NESTING) return luaL_error(L, "C stack overflow (bk calls nested too deeply)");
    bk_nesting++;
    rt->swift_depth++;
    bk_frame frame = { rt, L, bk_innermost_frame };
    bk_innermost_frame = &frame;
    int n = bk_swift_call(L, f->body, rt);
    bk_innermost_frame = frame.outer;
    rt->swift_depth--;
    bk_nesting--;
    // Swift has returned: from here on raising is safe.
    if (rt->memory_limit != 0 && rt->swift_depth == 0 && rt->bytes_in_use > rt->memory_limit) {
        lua_settop(L, 0);
        rt->swift_depth++;  // the message itself must be allocatable
        lua_pushliteral(L, "not enough memory");
        rt->swift_depth--;
        return lua_error(L);
    }
    if (n >= 0) return n;
    const char *fname = lua_tostring(L, lua_upvalueindex(2));
    switch (n) {
        case BK_RAISE_MESSAGE: {
            luaL_where(L, 1);
            lua_insert(L, -2);
            lua_concat(L, 2);
            return lua_error(L);
        }
        case BK_RAISE_ARGUMENT: {
            int arg = (int)lua_tointeger(L, -2);
            const char *extramsg = lua_tostring(L, -1);
            return bk_raise_argument(L, arg, extramsg ? extramsg : "?", fname);
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
            const char *msg = bk_pushtypeerror(L, arg, expected, fname);
            return bk_raise_argument(L, arg, msg, fname);
        }
        default:
            return lua_error(L);
    }
}

void bk_pushswiftfunction(lua_State *L, bk_runtime *rt, void *body, const char *name) {
    bk_function *f = (bk_function *)lua_newuserdatauv(L, sizeof(bk_function), 0);
    f->body = body;
    f->rt = rt;
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

// MARK: - Calling into Lua

int bk_pcall(lua_State *L, int nargs, int nresults, int msgh) {
    // Lua code called from Swift runs under the memory cap again; restore on the way back.
    void *ud = NULL;
    bk_runtime *rt = (lua_getallocf(L, &ud) == bk_alloc) ? (bk_runtime *)ud : NULL;
    int saved = 0;
    if (rt != NULL) {
        saved = rt->swift_depth;
        rt->swift_depth = 0;
        rt->pcall_depth++;
    }
    int status = lua_pcallk(L, nargs, nresults, msgh, 0, NULL);
    if (rt != NULL) {
        rt->swift_depth = saved;
        rt->pcall_depth--;
    }
    return status;
}

int bk_resume(lua_State *co, lua_State *from, int nargs, int *nresults) {
    // Same rule as bk_pcall: the coroutine's Lua code runs under the memory cap.
    void *ud = NULL;
    bk_runtime *rt = (lua_getallocf(co, &ud) == bk_alloc) ? (bk_runtime *)ud : NULL;
    int saved = 0;
    if (rt != NULL) {
        saved = rt->swift_depth;
        rt->swift_depth = 0;
        rt->pcall_depth++;
    }
    int status = lua_resume(co, from, nargs, nresults);
    if (rt != NULL) {
        rt->swift_depth = saved;
        rt->pcall_depth--;
    }
    return status;
}

int bk_traceback(lua_State *L) {
    const char *msg = lua_tostring(L, 1);
    if (msg == NULL) {
        // Not a string: keep the original value so callers can rethrow it unchanged.
        return 1;
    }
    if (strstr(msg, "\nstack traceback:") != NULL) return 1;  // already traced deeper down
    bk_luatraceback(L, L, msg, 1);  // names bk.map as called, not as bk_map
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

static int bk_openlibs_protected(lua_State *L) {
    luaL_openlibs(L);
    return 0;
}

int bk_openlibs(lua_State *L) {
    lua_pushcfunction(L, bk_openlibs_protected);
    return bk_pcall(L, 0, 0, 0);
}

// MARK: - Panic and warnings (what luaL_newstate installs; lua_newstate with our allocator does not)

static int bk_panic(lua_State *L) {
    const char *msg = lua_tostring(L, -1);
    fprintf(stderr, "PANIC: unprotected error in call to Lua API (%s)\n", msg ? msg : "error object is not a string");
    fflush(stderr);
    return 0;  // then Lua aborts
}

static void bk_warnfoff(void *ud, const char *message, int tocont);
static void bk_warnfon(void *ud, const char *message, int tocont);
static void bk_warnfcont(void *ud, const char *message, int tocont);

static int bk_warncontrol(lua_State *L, const char *message, int tocont) {
    if (tocont || *(message++) != '@') return 0;
    if (strcmp(message, "off") == 0) lua_setwarnf(L, bk_warnfoff, L);
    else if (strcmp(message, "on") == 0) lua_setwarnf(L, bk_warnfon, L);
    return 1;
}

static void bk_warnfoff(void *ud, const char *message, int tocont) {
    bk_warncontrol((lua_State *)ud, message, tocont);
}

static void bk_warnfcont(void *ud, const char *message, int tocont) {
    lua_State *L = (lua_State *)ud;
    fputs(message, stderr);
    if (tocont) lua_setwarnf(L, bk_warnfcont, L);
    else { fputs("\n", stderr); fflush(stderr); lua_setwarnf(L, bk_warnfon, L); }
}

static void bk_warnfon(void *ud, const char *message, int tocont) {
    if (bk_warncontrol((lua_State *)ud, message, tocont)) return;
    fputs("Lua warning: ", stderr);
    bk_warnfcont(ud, message, tocont);
}

void bk_setdefaulthandlers(lua_State *L) {
    lua_atpanic(L, bk_panic);
    lua_setwarnf(L, bk_warnfoff, L);
}

// MARK: - Standard streams

void bk_write_stdout(const char *s, size_t n) {
    fwrite(s, 1, n, stdout);
    fflush(stdout);
}

void bk_write_stderr(const char *s, size_t n) {
    fflush(stdout);  // keep stdout and stderr in the order they were written
    fwrite(s, 1, n, stderr);
    fflush(stderr);
}

// MARK: - Loading as a C module (stock lua5.4: require "bk")

lua_State *bk_mainthread(lua_State *L) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
    lua_State *main = lua_tothread(L, -1);
    lua_pop(L, 1);
    return main;
}

int luaopen_bk(lua_State *L) {
    // lua_close dlcloses C modules, but the Swift runtime and Dispatch's worker threads keep
    // running code of this library until the process ends: pin it (never unloaded).
    Dl_info info;
    if (dladdr((void *)luaopen_bk, &info) != 0 && info.dli_fname != NULL)
        (void)dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
    int n = bk_open_module(L);
    if (n < 0) return lua_error(L);
    return n;
}

// MARK: - Block walks (the collection helpers' fast path)

// Applies the walk's action to the block's answer on top (`value`: the element's slot when still
// on the stack, `key`: its key for dictionaries, else 0). Raw operations only.
static inline void bk_walk_apply(lua_State *L, bk_walk *w, int key, int value) {
    switch (w->action) {
        case BK_WALK_FOLD:
            lua_copy(L, -1, w->prefix);
            break;
        case BK_WALK_MAP:
            if (lua_type(L, -1) == LUA_TNIL) lua_copy(L, w->null, -1);
            if (key != 0) {
                lua_pushvalue(L, key);
                lua_rotate(L, -2, 1);
                lua_rawset(L, w->result);
            } else {
                lua_rawseti(L, w->result, ++w->appended);
            }
            break;
        case BK_WALK_KEEP:
        case BK_WALK_DROP:
            if (lua_toboolean(L, -1) == (w->action == BK_WALK_KEEP)) {
                if (key != 0) {
                    lua_pushvalue(L, key);
                    lua_pushvalue(L, value);
                    lua_rawset(L, w->result);
                } else {
                    lua_pushvalue(L, value);
                    lua_rawseti(L, w->result, ++w->appended);
                }
            }
            break;
        default:
            break;
    }
}

static int bk_walk_driver(lua_State *L) {
    bk_walk *w = (bk_walk *)lua_touserdata(L, -1);
    lua_settop(L, -2);
    int base = lua_gettop(L);
    int results = w->action == BK_WALK_DISCARD ? 0 : 1;
    int keepsValue = w->action == BK_WALK_KEEP || w->action == BK_WALK_DROP;
    // Lists: after a call, DISCARD and MAP (the answer is popped into the result) are back at base.
    int backAtBase = w->action == BK_WALK_DISCARD || w->action == BK_WALK_MAP;
    if (w->keys == 0) {
        int nargs = w->prefix != 0 ? 2 : 1;
        for (lua_Integer position = 1; position <= w->count; position++) {
            if (keepsValue) {
                if (lua_rawgeti(L, w->table, position) == LUA_TNIL) break;  // the list ends here
                lua_pushvalue(L, w->block);
                lua_pushvalue(L, base + 1);
            } else {
                // The element is read straight into the argument slot the call consumes.
                lua_pushvalue(L, w->block);
                if (w->prefix != 0) lua_pushvalue(L, w->prefix);
                if (lua_rawgeti(L, w->table, position) == LUA_TNIL) break;
            }
            lua_call(L, nargs, results);
            if (results != 0) bk_walk_apply(L, w, 0, base + 1);
            if (!backAtBase) lua_settop(L, base);
        }
    } else {
        int nargs = w->prefix != 0 ? 3 : 2;
        for (lua_Integer position = 1; position <= w->count; position++) {
            lua_rawgeti(L, w->keys, position);
            lua_pushvalue(L, base + 1);
            if (lua_rawget(L, w->table) != LUA_TNIL) {  // removed by an earlier block: skipped
                lua_pushvalue(L, w->block);
                if (w->prefix != 0) lua_pushvalue(L, w->prefix);
                lua_pushvalue(L, base + 1);
                lua_pushvalue(L, base + 2);
                lua_call(L, nargs, results);
                if (results != 0) bk_walk_apply(L, w, base + 1, base + 2);
            }
            lua_settop(L, base);
        }
    }
    lua_settop(L, base);
    return base;
}

int bk_walk_run(lua_State *L, bk_walk *walk, int handler) {
    int n = lua_gettop(L);
    if (!lua_checkstack(L, n + 2)) return BK_WALK_NO_STACK;
    lua_pushcfunction(L, bk_walk_driver);
    for (int i = 1; i <= n; i++) lua_pushvalue(L, i);
    lua_pushlightuserdata(L, walk);
    int status = bk_pcall(L, n + 1, n, handler);
    if (status != LUA_OK) return status;
    for (int i = 1; i <= n; i++) lua_copy(L, n + i, i);
    lua_settop(L, n);
    return LUA_OK;
}
