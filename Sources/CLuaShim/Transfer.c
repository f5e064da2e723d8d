// Copies values between two Lua states (workers, channels). Rule of this file: the copy runs in
// C inside ONE protected call of the state that may raise (the target when copying, the source
// when only checking), reads the source with raw, non-allocating operations only (lua_next,
// lua_rawget, lua_getupvalue, lua_dump) and calls back into Swift only for shareable bridged
// objects, with that state's swift_depth raised (their pushes must not fail inside Swift).
// The caller holds both states (their locks): neither runs Lua meanwhile. Both collectors are
// stopped for the copy (bk_gc_pause): an allocation would otherwise run finalizers, whose Lua
// code could call bk (w:result(), a channel) while the copy and its caller's locks are half-way.
#include "CLuaShim.h"
#include "Dump.h"
#include <stdio.h>
#include <string.h>

// Registry keys (light userdata) of a state's well-known values: value -> name and name -> value.
static const char bk_names_key = 'n';
static const char bk_values_key = 'v';

// The modules whose values cross as the target state's own, in this order (a value reachable
// under two names is named by the first).
static const char *const bk_known_modules[] = {
    "bk", "string", "table", "math", "utf8", "coroutine", "os", "io", "debug", "package", "_G", NULL
};

#define BK_TRANSFER_MAX_DEPTH 200

// One step of the path from the value being copied to the part that could not cross, as the
// error message names it ("upvalue 'acc' of field 'f' of the block ...").
typedef enum bk_segment_kind {
    BK_SEGMENT_UPVALUE,        // "upvalue 'name'" (or "upvalue #index" when it has no name)
    BK_SEGMENT_STRING_FIELD,   // "field 'name'"
    BK_SEGMENT_INTEGER_FIELD,  // "element [index]"
    BK_SEGMENT_OTHER_FIELD,    // "a field" (a key that is neither a string nor an integer)
    BK_SEGMENT_KEY,            // "a key" (the key itself could not cross)
} bk_segment_kind;

typedef struct bk_segment {
    bk_segment_kind kind;
    const char *name;     // upvalue or field name (owned by the source state, alive meanwhile)
    lua_Integer index;
} bk_segment;

typedef struct bk_transfer {
    lua_State *from;
    lua_State *to;        // NULL: check only
    lua_State *E;         // where the walk raises and keeps its tables (to, or from when checking)
    int strict;           // tables of the value's own are refused (parallel eligibility)
    int as_argument;      // the reason is worded for a bad argument (BK_TRANSFER_AS_ARGUMENT)
    int memo;             // E: source pointer (light userdata) -> copy (or true)
    int joins;            // E (copy): upvalue id -> {function, index}
    int names;            // from: value -> name
    int values;           // to: name -> value
    const char *root;     // what the value is ("the block", "argument #2")
    int depth;
    bk_segment path[BK_TRANSFER_MAX_DEPTH + 1];
} bk_transfer;

// MARK: - Well-known values

static void bk_known_record(lua_State *L, int names, int values, int value, const char *name) {
    lua_pushstring(L, name);
    lua_pushvalue(L, value);
    lua_rawset(L, values);
    lua_pushvalue(L, value);
    if (lua_rawget(L, names) == LUA_TNIL) {
        lua_pushvalue(L, value);
        lua_pushstring(L, name);
        lua_rawset(L, names);
    }
    lua_pop(L, 1);
}

// Whether the Lua function at `idx` comes from one of the bridge's own chunks (named `=bk/...`).
static int bk_known_is_bridge_function(lua_State *L, int idx) {
    lua_Debug ar;
    lua_pushvalue(L, idx);
    if (!lua_getinfo(L, ">S", &ar)) return 0;
    return ar.source != NULL && strncmp(ar.source, "=bk/", 4) == 0;
}

static int bk_known_has_metatable(lua_State *L, int idx) {
    if (!lua_getmetatable(L, idx)) return 0;
    lua_pop(L, 1);
    return 1;
}

// Protected (in the state itself): builds the state's tables of well-known values, or adds to
// them once bk's functions were replaced. Adding keeps the old values named: a block that kept a
// task stub (`local sleep = bk.sleep` before the engine loaded) still crosses as `bk.sleep`.
static int bk_known_build(lua_State *L) {
    if (lua_rawgetp(L, LUA_REGISTRYINDEX, &bk_names_key) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
    }
    int names = lua_gettop(L);
    if (lua_rawgetp(L, LUA_REGISTRYINDEX, &bk_values_key) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
    }
    int values = lua_gettop(L);
    lua_pushliteral(L, LUA_LOADED_TABLE);
    if (lua_rawget(L, LUA_REGISTRYINDEX) == LUA_TTABLE) {
        int loaded = lua_gettop(L);
        for (int m = 0; bk_known_modules[m] != NULL; m++) {
            const char *module = bk_known_modules[m];
            if (lua_getfield(L, loaded, module) != LUA_TTABLE) {  // _LOADED has no metatable
                lua_pop(L, 1);
                continue;
            }
            int table = lua_gettop(L);
            bk_known_record(L, names, values, table, module);
            int isbk = strcmp(module, "bk") == 0;
            lua_pushnil(L);
            while (lua_next(L, table)) {
                int t = lua_type(L, -1);
                // C functions of every module; bk's own values too (bk.null, bk.cancelled, queues,
                // its functions). A Lua function is bk's own when the bridge's chunks made it
                // (`=bk/...`), a table when it has a metatable (bk.cancelled's): a function or a
                // plain table a script stored in bk (bk.tally = function ... end, bk.acc = {}) is
                // the script's, checked and copied as any other.
                int known = lua_iscfunction(L, -1) || (isbk && t == LUA_TUSERDATA)
                    || (isbk && t == LUA_TTABLE && bk_known_has_metatable(L, lua_gettop(L)))
                    || (isbk && t == LUA_TFUNCTION && bk_known_is_bridge_function(L, lua_gettop(L)));
                if (known && lua_type(L, -2) == LUA_TSTRING) {
                    lua_pushfstring(L, "%s.%s", module, lua_tostring(L, -2));
                    bk_known_record(L, names, values, lua_gettop(L) - 1, lua_tostring(L, -1));
                    lua_pop(L, 1);
                }
                lua_pop(L, 1);
            }
            lua_pop(L, 1);
        }
    }
    lua_settop(L, values);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &bk_values_key);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &bk_names_key);
    return 0;
}

static int bk_known_prepare(lua_State *L) {
    if (!lua_checkstack(L, 4)) return LUA_ERRMEM;
    bk_runtime *rt = bk_runtime_of(L);
    int changed = rt != NULL && rt->known_values_changed;
    if (lua_rawgetp(L, LUA_REGISTRYINDEX, &bk_names_key) == LUA_TTABLE && !changed) {
        lua_pop(L, 1);
        return LUA_OK;
    }
    lua_pop(L, 1);
    lua_pushcfunction(L, bk_known_build);
    int status = bk_pcall(L, 0, 0, 0);
    if (status != LUA_OK) lua_pop(L, 1);
    else if (rt != NULL) rt->known_values_changed = 0;
    return status;
}

// MARK: - Errors naming the value

// A reason worded for a bad argument: "is a coroutine" becomes "a coroutine cannot cross to another
// state" (the value itself) or "... is a coroutine, which cannot cross to another state" (a part of
// it). Other reasons (nested too deeply, a value the other state lacks) stay as they are.
static const char *bk_transfer_argument_reason(bk_transfer *t, const char *what, char *out, size_t size) {
    static const char unshared[] = " (not shareable between states)";
    if (!t->as_argument || strncmp(what, "is a", 4) != 0) return what;
    size_t n = strlen(what);
    size_t tail = sizeof unshared - 1;
    if (n > tail && strcmp(what + n - tail, unshared) == 0) n -= tail;
    if (t->depth == 0) snprintf(out, size, "%.*s cannot cross to another state", (int)(n - 3), what + 3);
    else snprintf(out, size, "%.*s, which cannot cross to another state", (int)n, what);
    return out;
}

static void bk_transfer_fail(bk_transfer *t, const char *what) {
    char message[512];
    char reason[256];
    size_t used = 0;
    message[0] = 0;
    what = bk_transfer_argument_reason(t, what, reason, sizeof reason);
    if (t->as_argument && t->depth == 0 && what == reason) {
        lua_pushstring(t->E, reason);
        lua_error(t->E);
    }
    for (int i = t->depth; i >= 1 && used < sizeof message; i--) {
        const bk_segment *s = &t->path[i];
        int n;
        // A deep path keeps its innermost and outermost steps: the reason must fit in the message.
        if (t->depth > 8 && i == t->depth - 3) {
            n = snprintf(message + used, sizeof message - used, "... (%d more) ... of ", t->depth - 6);
            if (n < 0) break;
            used += (size_t)n;
            i = 4;
            continue;
        }
        switch (s->kind) {
            case BK_SEGMENT_UPVALUE:  // a stripped function's have no names: Lua says "(no name)"
                n = s->name && s->name[0] && strcmp(s->name, "(no name)") != 0
                        ? snprintf(message + used, sizeof message - used, "upvalue '%.60s' of ", s->name)
                        : snprintf(message + used, sizeof message - used, "upvalue #%lld of ", (long long)s->index);
                break;
            case BK_SEGMENT_STRING_FIELD: n = snprintf(message + used, sizeof message - used, "field '%.60s' of ", s->name); break;
            case BK_SEGMENT_INTEGER_FIELD: n = snprintf(message + used, sizeof message - used, "element [%lld] of ", (long long)s->index); break;
            case BK_SEGMENT_OTHER_FIELD: n = snprintf(message + used, sizeof message - used, "a field of "); break;
            case BK_SEGMENT_KEY:
            default: n = snprintf(message + used, sizeof message - used, "a key of "); break;
        }
        if (n < 0) break;
        used += (size_t)n;
    }
    if (used < sizeof message) snprintf(message + used, sizeof message - used, "%s %s", t->root, what);
    lua_pushstring(t->E, message);
    lua_error(t->E);
}

static void bk_transfer_push_segment(bk_transfer *t, bk_segment_kind kind, const char *name, lua_Integer index) {
    if (t->depth >= BK_TRANSFER_MAX_DEPTH) bk_transfer_fail(t, "is nested too deeply");
    t->depth++;
    t->path[t->depth] = (bk_segment){ .kind = kind, .name = name, .index = index };
}

// MARK: - The walk

static void bk_transfer_walk(bk_transfer *t, int src);

// Pushes (copy mode) the target's value named like the source value at `src`; 0 when not named.
static int bk_transfer_known(bk_transfer *t, int src) {
    lua_State *from = t->from;
    lua_pushvalue(from, src);
    if (lua_rawget(from, t->names) != LUA_TSTRING) {
        lua_pop(from, 1);
        return 0;
    }
    if (t->to != NULL) {
        size_t n;
        const char *name = lua_tolstring(from, -1, &n);
        lua_pushlstring(t->to, name, n);
        if (lua_rawget(t->to, t->values) == LUA_TNIL) {
            char what[160];
            snprintf(what, sizeof what, "is %s, which the other state does not have", name);
            lua_pop(from, 1);
            bk_transfer_fail(t, what);
        }
    }
    lua_pop(from, 1);
    return 1;
}

// Memo lookup: true (copy pushed in copy mode) when the source object was met before.
static int bk_transfer_seen(bk_transfer *t, int src) {
    lua_pushlightuserdata(t->E, (void *)lua_topointer(t->from, src));
    if (lua_rawget(t->E, t->memo) != LUA_TNIL) {
        if (t->to == NULL) lua_pop(t->E, 1);
        return 1;
    }
    lua_pop(t->E, 1);
    return 0;
}

// Records the copy on top of E (or true when checking) for the source object.
static void bk_transfer_remember(bk_transfer *t, int src) {
    lua_pushlightuserdata(t->E, (void *)lua_topointer(t->from, src));
    if (t->to != NULL) lua_pushvalue(t->E, -2);
    else lua_pushboolean(t->E, 1);
    lua_rawset(t->E, t->memo);
}

static void bk_transfer_fill(bk_transfer *t, int src, int target);

static void bk_transfer_table(bk_transfer *t, int src) {
    lua_State *from = t->from;
    if (t->strict) bk_transfer_fail(t, "is a table: bk.freeze it to share a read-only copy");
    int target = 0;
    if (t->to != NULL) {
        lua_Unsigned length = lua_rawlen(from, src);
        lua_createtable(t->to, length > (1 << 14) ? (1 << 14) : (int)length, 0);  // a hint only
        target = lua_gettop(t->to);
    }
    bk_transfer_remember(t, src);
    bk_transfer_fill(t, src, target);
}

// Copies (or checks) the entries of the table at `src` into the table at `target` of `to`.
static void bk_transfer_fill(bk_transfer *t, int src, int target) {
    lua_State *from = t->from;
    lua_pushnil(from);
    while (lua_next(from, src)) {
        int key = lua_gettop(from) - 1, value = key + 1;
        bk_transfer_push_segment(t, BK_SEGMENT_KEY, NULL, 0);
        bk_transfer_walk(t, key);
        t->depth--;
        if (lua_type(from, key) == LUA_TSTRING)
            bk_transfer_push_segment(t, BK_SEGMENT_STRING_FIELD, lua_tostring(from, key), 0);
        else if (lua_isinteger(from, key))
            bk_transfer_push_segment(t, BK_SEGMENT_INTEGER_FIELD, NULL, lua_tointeger(from, key));
        else
            bk_transfer_push_segment(t, BK_SEGMENT_OTHER_FIELD, NULL, 0);
        bk_transfer_walk(t, value);
        t->depth--;
        if (t->to != NULL) lua_rawset(t->to, target);
        lua_pop(from, 1);
    }
}

// A frozen table (its contents pushed on `from` by bk_frozen_contents, popped here): allowed in
// strict mode (it cannot change, so a copy loses nothing), and copied once per target state, which
// keeps it under its id for the next copies. The target's view is made (and kept) before its
// contents are filled, so a cycle back to it finds it.
static void bk_transfer_frozen(bk_transfer *t, int src, lua_Integer id) {
    lua_State *from = t->from, *to = t->to;
    int contents = lua_gettop(from);
    if (bk_frozen_has_own_keys(from, src)) {
        lua_pop(from, 1);
        bk_transfer_fail(t, "is a frozen table written to with rawset");
    }
    if (to == NULL || bk_frozen_push_kept(to, id)) {
        lua_pop(from, 1);
        return;
    }
    lua_Unsigned length = lua_rawlen(from, contents);
    lua_createtable(to, length > (1 << 14) ? (1 << 14) : (int)length, 0);  // a hint only
    int copy = lua_gettop(to);
    bk_frozen_push_copied_view(to, copy, id);
    int strict = t->strict;
    t->strict = 0;
    bk_transfer_fill(t, contents, copy);
    t->strict = strict;
    lua_remove(to, copy);
    lua_pop(from, 1);
}

typedef struct bk_dump_counted {
    char *bytes;      // NULL: only count
    size_t size;
} bk_dump_counted;

static int bk_dump_counted_write(lua_State *L, const void *p, size_t size, void *ud) {
    (void)L;
    bk_dump_counted *b = (bk_dump_counted *)ud;
    if (b->bytes != NULL) memcpy(b->bytes + b->size, p, size);
    b->size += size;
    return 0;
}

static void bk_transfer_function(bk_transfer *t, int src) {
    lua_State *from = t->from, *to = t->to;
    if (lua_iscfunction(from, src)) bk_transfer_fail(t, "is a C function");
    if (t->strict) {  // on the pool its assignments would go to the copy's state, unseen
        char reason[200];
        if (bk_function_assignment(from, src, reason, sizeof reason)) bk_transfer_fail(t, reason);
    }
    int target = 0;
    if (to != NULL) {
        // Dumped twice (size, then bytes) into a userdata of the target: no buffer to leak if the
        // target raises (out of memory) meanwhile.
        bk_dump_counted count = { NULL, 0 };
        lua_pushvalue(from, src);
        lua_dump(from, bk_dump_counted_write, &count, 0);
        bk_dump_counted fill = { (char *)lua_newuserdatauv(to, count.size, 0), 0 };
        lua_dump(from, bk_dump_counted_write, &fill, 0);
        lua_pop(from, 1);
        int status = luaL_loadbufferx(to, fill.bytes, fill.size, "=(transferred function)", "b");
        if (status != LUA_OK) lua_error(to);
        lua_remove(to, -2);
        target = lua_gettop(to);
    }
    bk_transfer_remember(t, src);
    for (int i = 1;; i++) {
        if (!lua_checkstack(from, 4)) bk_transfer_fail(t, "is nested too deeply");
        const char *name = lua_getupvalue(from, src, i);
        if (name == NULL) break;
        int value = lua_gettop(from);
        int isglobals = 0, inherits = 0;
        if (strcmp(name, "_ENV") == 0) {
            lua_rawgeti(from, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
            isglobals = lua_rawequal(from, -1, -2);
            // An environment that falls back on the globals (setmetatable(env, {__index = _G})):
            // its own fields are copied, and the copy falls back on the target's globals.
            if (!isglobals && lua_type(from, value) == LUA_TTABLE && lua_getmetatable(from, value)) {
                lua_pushliteral(from, "__index");
                lua_rawget(from, -2);
                inherits = lua_rawequal(from, -1, -3);
                lua_pop(from, 2);
            }
            lua_pop(from, 1);
        }
        if (isglobals) {
            // The source's own globals become the target's. Any other environment (a sandbox's
            // restricted table) is copied as a table below, so the restriction survives.
            if (to != NULL) {
                lua_rawgeti(to, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
                lua_setupvalue(to, target, i);
            }
            lua_pop(from, 1);
            continue;
        }
        bk_transfer_push_segment(t, BK_SEGMENT_UPVALUE, name, i);
        if (to != NULL) {
            // Upvalues shared between copied closures stay shared: the first copy owns the cell.
            void *id = lua_upvalueid(from, src, i);
            lua_pushlightuserdata(to, id);
            if (lua_rawget(to, t->joins) == LUA_TTABLE) {
                lua_rawgeti(to, -1, 1);
                lua_rawgeti(to, -2, 2);
                lua_upvaluejoin(to, target, i, -2, (int)lua_tointeger(to, -1));
                lua_pop(to, 3);
                t->depth--;
                lua_pop(from, 1);
                continue;
            }
            lua_pop(to, 1);
            lua_pushlightuserdata(to, id);
            lua_createtable(to, 2, 0);
            lua_pushvalue(to, target);
            lua_rawseti(to, -2, 1);
            lua_pushinteger(to, i);
            lua_rawseti(to, -2, 2);
            lua_rawset(to, t->joins);
        }
        bk_transfer_walk(t, value);
        if (inherits && to != NULL) {
            lua_createtable(to, 0, 1);
            lua_rawgeti(to, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
            lua_setfield(to, -2, "__index");
            lua_setmetatable(to, -2);
        }
        if (to != NULL && lua_setupvalue(to, target, i) == NULL) lua_pop(to, 1);
        t->depth--;
        lua_pop(from, 1);
    }
}

static void bk_transfer_userdata(bk_transfer *t, int src) {
    lua_State *from = t->from;
    if (bk_transfer_is_shareable(from, src)) {
        if (t->to != NULL) {
            bk_runtime *rt = bk_runtime_of(t->to);
            if (rt != NULL) rt->swift_depth++;
            int pushed = bk_transfer_push_shared(from, src, t->to);
            if (rt != NULL) rt->swift_depth--;
            if (!pushed) bk_transfer_fail(t, "could not be shared");
        }
        return;
    }
    // The metatable's __name, found by walking it: pushing the key could allocate in `from`.
    char what[160];
    const char *name = NULL;
    if (lua_getmetatable(from, src)) {
        lua_pushnil(from);
        while (lua_next(from, -2)) {
            if (lua_type(from, -2) == LUA_TSTRING && lua_type(from, -1) == LUA_TSTRING &&
                strcmp(lua_tostring(from, -2), "__name") == 0) {
                snprintf(what, sizeof what, "is a %s (not shareable between states)", lua_tostring(from, -1));
                name = what;
                lua_pop(from, 2);
                break;
            }
            lua_pop(from, 1);
        }
        lua_pop(from, 1);
    }
    bk_transfer_fail(t, name ? what : "is a userdata (not shareable between states)");
}

static void bk_transfer_walk(bk_transfer *t, int src) {
    lua_State *from = t->from, *to = t->to;
    if (!lua_checkstack(from, 8) || (to != NULL && !lua_checkstack(to, 8)))
        bk_transfer_fail(t, "is nested too deeply");
    int type = lua_type(from, src);
    switch (type) {
        case LUA_TNIL:
            if (to) lua_pushnil(to);
            return;
        case LUA_TBOOLEAN:
            if (to) lua_pushboolean(to, lua_toboolean(from, src));
            return;
        case LUA_TNUMBER:
            if (to) {
                if (lua_isinteger(from, src)) lua_pushinteger(to, lua_tointeger(from, src));
                else lua_pushnumber(to, lua_tonumber(from, src));
            }
            return;
        case LUA_TSTRING: {
            if (to) {
                size_t n;
                const char *s = lua_tolstring(from, src, &n);
                lua_pushlstring(to, s, n);
            }
            return;
        }
        case LUA_TLIGHTUSERDATA:
            bk_transfer_fail(t, "is a light userdata");
            return;
        case LUA_TTHREAD:
            bk_transfer_fail(t, "is a coroutine");
            return;
        default:
            break;
    }
    if (bk_transfer_known(t, src)) return;
    if (type == LUA_TUSERDATA) {
        bk_transfer_userdata(t, src);
        return;
    }
    if (type == LUA_TTABLE) {
        lua_Integer id = bk_frozen_contents(from, src);
        if (id > 0) {
            bk_transfer_frozen(t, src, id);
            return;
        }
    }
    if (bk_transfer_seen(t, src)) return;
    if (type == LUA_TTABLE) bk_transfer_table(t, src);
    else bk_transfer_function(t, src);
}

// MARK: - Entry points

// A pause returns 1 + the kilobytes in use when it began (0: not paused), so that the resume
// can record what was allocated meanwhile as owed work.
int bk_gc_pause(lua_State *L) {
    // 0 when the script stopped it, or inside a finalizer (Lua takes no GC steps there anyway).
    if (lua_gc(L, LUA_GCISRUNNING) != 1) return 0;
    lua_gc(L, LUA_GCSTOP);
    return 1 + lua_gc(L, LUA_GCCOUNT);
}

void bk_gc_resume(lua_State *L, int paused) {
    if (!paused) return;
    lua_gc(L, LUA_GCRESTART);
    bk_runtime *rt = bk_runtime_of(L);
    int grown = lua_gc(L, LUA_GCCOUNT) - (paused - 1);
    if (rt != NULL && grown > 0) rt->gc_owed_kb = grown > (1 << 30) - rt->gc_owed_kb ? (1 << 30) : rt->gc_owed_kb + grown;
}

static int bk_gc_settle_step(lua_State *L) {
    lua_gc(L, LUA_GCSTEP, (int)lua_tointeger(L, 1));
    return 0;
}

void bk_gc_settle(lua_State *L) {
    bk_runtime *rt = bk_runtime_of(L);
    if (rt == NULL || rt->gc_owed_kb <= 0 || !lua_checkstack(L, 3)) return;
    int owed = rt->gc_owed_kb;
    rt->gc_owed_kb = 0;
    lua_pushcfunction(L, bk_gc_settle_step);
    lua_pushinteger(L, owed);
    if (bk_pcall(L, 1, 0, 0) != LUA_OK) lua_pop(L, 1);
}

// What bk_transfer_run does.
typedef enum bk_transfer_mode {
    BK_TRANSFER_VALUES,  // copy (or check) `count` stack values from `first`
    BK_TRANSFER_RANGE,   // copy list elements `range_first` ... of `table` into a list of the target
} bk_transfer_mode;

typedef struct bk_transfer_job {
    bk_transfer *t;
    bk_transfer_mode mode;
    // BK_TRANSFER_VALUES: the values of `from` (numbered > 0: named "what #numbered", ...).
    int first, count, numbered;
    // BK_TRANSFER_RANGE: elements of the list at `table` of `from`, into positions offset + 1 ...
    // of a table of the target: when `target` is 1, the one passed to bk_transfer_run (its slot 1
    // once the job starts); when 0, a new list it returns.
    int table, target;
    lua_Integer range_first, range_count, offset;
} bk_transfer_job;

static int bk_transfer_run_range(lua_State *E, bk_transfer_job *job) {
    bk_transfer *t = job->t;
    int target = job->target;
    if (target == 0) {
        lua_createtable(E, job->range_count > (1 << 14) ? (1 << 14) : (int)job->range_count, 0);
        target = lua_gettop(E);
    }
    for (lua_Integer i = 0; i < job->range_count; i++) {
        lua_rawgeti(t->from, job->table, job->range_first + i);
        t->depth = 0;
        // Named by its place in the caller's list: the target's when copying into one (results
        // coming back), else the source's (elements going out).
        bk_transfer_push_segment(t, BK_SEGMENT_INTEGER_FIELD, NULL,
                                 job->target ? job->offset + i + 1 : job->range_first + i);
        bk_transfer_walk(t, lua_gettop(t->from));
        lua_rawseti(E, target, job->offset + i + 1);
        lua_pop(t->from, 1);
    }
    return job->target == 0 ? 1 : 0;
}

// Protected in E: lightuserdata job. Copies (or checks) `count` values from `first`.
static int bk_transfer_run(lua_State *E) {
    bk_transfer_job *job = (bk_transfer_job *)lua_touserdata(E, 1);
    bk_transfer *t = job->t;
    lua_remove(E, 1);  // range mode with a target: the target table is now slot 1
    int base = lua_gettop(E);
    lua_newtable(E);
    t->memo = base + 1;
    lua_newtable(E);
    t->joins = base + 2;
    if (t->to != NULL) {
        lua_rawgetp(E, LUA_REGISTRYINDEX, &bk_values_key);
        t->values = base + 3;
    } else {
        lua_pushnil(E);
    }
    if (job->mode == BK_TRANSFER_RANGE) return bk_transfer_run_range(E, job);
    char root[64];
    const char *given = t->root;
    for (int i = 0; i < job->count; i++) {
        if (job->numbered > 0) {
            snprintf(root, sizeof root, "%s #%d", given, job->numbered + i);
            t->root = root;
        }
        t->depth = 0;
        bk_transfer_walk(t, job->first + i);
    }
    t->root = given;
    return t->to != NULL ? job->count : 0;
}

// Plain values (nil, booleans, numbers, strings) need no walk: pushed directly (the callers hold
// `to` with swift_depth > 0, so these pushes cannot fail).
static int bk_transfer_plain(lua_State *from, int first, int count, lua_State *to) {
    for (int i = 0; i < count; i++) {
        int type = lua_type(from, first + i);
        if (type != LUA_TNIL && type != LUA_TBOOLEAN && type != LUA_TNUMBER && type != LUA_TSTRING) return 0;
    }
    if (!lua_checkstack(to, count + 1)) return 0;
    for (int i = 0; i < count; i++) {
        int src = first + i;
        switch (lua_type(from, src)) {
            case LUA_TNIL: lua_pushnil(to); break;
            case LUA_TBOOLEAN: lua_pushboolean(to, lua_toboolean(from, src)); break;
            case LUA_TNUMBER:
                if (lua_isinteger(from, src)) lua_pushinteger(to, lua_tointeger(from, src));
                else lua_pushnumber(to, lua_tonumber(from, src));
                break;
            default: {
                size_t n;
                const char *s = lua_tolstring(from, src, &n);
                lua_pushlstring(to, s, n);
            }
        }
    }
    return 1;
}

static int bk_transfer_copy_running(lua_State *from, int first, int count, lua_State *to,
                                    const char *what, int numbered) {
    first = lua_absindex(from, first);
    bk_runtime *rt = bk_runtime_of(to);
    if (rt != NULL && rt->swift_depth > 0 && bk_transfer_plain(from, first, count, to)) return LUA_OK;
    int status = bk_known_prepare(from);
    if (status != LUA_OK) {
        lua_pushliteral(to, "not enough memory");
        return status;
    }
    if (!lua_checkstack(from, 2) || !lua_checkstack(to, count + 8)) {
        lua_pushliteral(to, "stack overflow (too many values to copy)");
        return LUA_ERRRUN;
    }
    status = bk_known_prepare(to);
    if (status != LUA_OK) {
        lua_pushliteral(to, "not enough memory");
        return status;
    }
    lua_rawgetp(from, LUA_REGISTRYINDEX, &bk_names_key);
    bk_transfer t;
    memset(&t, 0, sizeof t);
    t.from = from;
    t.to = to;
    t.E = to;
    t.names = lua_gettop(from);
    t.root = what;
    bk_transfer_job job = { .t = &t, .mode = BK_TRANSFER_VALUES, .first = first, .count = count, .numbered = numbered };
    // The copy runs on a Lua thread of its own in `to`, so the caller's stack holds only results.
    lua_State *worker = lua_newthread(to);
    t.to = t.E = worker;
    lua_pushcfunction(worker, bk_transfer_run);
    lua_pushlightuserdata(worker, &job);
    status = bk_pcall(worker, 1, LUA_MULTRET, 0);
    lua_pop(from, 1);
    int results = lua_gettop(worker);
    lua_xmove(worker, to, results);  // the results (or the error value), above the thread
    lua_remove(to, -results - 1);    // the thread itself
    return status;
}

static int bk_transfer_copy_range_running(lua_State *from, int table, lua_Integer first, lua_Integer count,
                                          lua_State *to, int target, lua_Integer offset, const char *what) {
    table = lua_absindex(from, table);
    if (target != 0) target = lua_absindex(to, target);
    int status = bk_known_prepare(from);
    if (status == LUA_OK) status = bk_known_prepare(to);
    if (status != LUA_OK) {
        lua_pushliteral(to, "not enough memory");
        return status;
    }
    if (!lua_checkstack(from, 4) || !lua_checkstack(to, 4)) {
        lua_pushliteral(to, "stack overflow");
        return LUA_ERRRUN;
    }
    lua_rawgetp(from, LUA_REGISTRYINDEX, &bk_names_key);
    bk_transfer t;
    memset(&t, 0, sizeof t);
    t.from = from;
    t.names = lua_gettop(from);
    t.root = what;
    lua_State *worker = lua_newthread(to);
    t.to = t.E = worker;
    bk_transfer_job job = {
        .t = &t, .mode = BK_TRANSFER_RANGE, .table = table, .target = target != 0,
        .range_first = first, .range_count = count, .offset = offset,
    };
    // The target table is reached from the copying thread through its stack: move a reference.
    lua_pushcfunction(worker, bk_transfer_run);
    lua_pushlightuserdata(worker, &job);
    int args = 1;
    if (target != 0) {
        lua_pushvalue(to, target);
        lua_xmove(to, worker, 1);
        args = 2;
    }
    status = bk_pcall(worker, args, LUA_MULTRET, 0);
    lua_pop(from, 1);
    int results = lua_gettop(worker);
    lua_xmove(worker, to, results);
    lua_remove(to, -results - 1);
    return status;
}

static int bk_transfer_check_running(lua_State *L, int idx, const char *what, int flags) {
    idx = lua_absindex(L, idx);
    int status = bk_known_prepare(L);
    if (status != LUA_OK) {
        lua_pushliteral(L, "not enough memory");
        return status;
    }
    if (!lua_checkstack(L, 8)) {
        lua_pushliteral(L, "stack overflow");
        return LUA_ERRRUN;
    }
    lua_rawgetp(L, LUA_REGISTRYINDEX, &bk_names_key);
    int names = lua_gettop(L);
    // The walk reads L and keeps its memo (and raises) on a thread of its own.
    lua_State *thread = lua_newthread(L);
    bk_transfer t;
    memset(&t, 0, sizeof t);
    t.from = L;
    t.E = thread;
    t.names = names;
    t.root = what;
    // Strict mode is about what a Lua block captures; a named C function is fine as it is.
    t.strict = (flags & BK_TRANSFER_STRICT) && lua_type(L, idx) == LUA_TFUNCTION && !lua_iscfunction(L, idx);
    t.as_argument = (flags & BK_TRANSFER_AS_ARGUMENT) != 0;
    bk_transfer_job job = { .t = &t, .mode = BK_TRANSFER_VALUES, .first = idx, .count = 1 };
    lua_pushcfunction(thread, bk_transfer_run);
    lua_pushlightuserdata(thread, &job);
    status = bk_pcall(thread, 1, 0, 0);
    if (status != LUA_OK) lua_xmove(thread, L, 1);  // L: names, thread[, error]
    lua_remove(L, names + 1);
    lua_remove(L, names);
    return status;
}

// The entry points: each runs with both collectors stopped (see the top of this file). Garbage
// made meanwhile is the copy's memo tables and thread, alive until the end anyway.

int bk_transfer_copy(lua_State *from, int first, int count, lua_State *to,
                     const char *what, int numbered) {
    int pf = bk_gc_pause(from), pt = bk_gc_pause(to);
    int status = bk_transfer_copy_running(from, first, count, to, what, numbered);
    bk_gc_resume(to, pt);
    bk_gc_resume(from, pf);
    return status;
}

int bk_transfer_copy_range(lua_State *from, int table, lua_Integer first, lua_Integer count,
                           lua_State *to, int target, lua_Integer offset, const char *what) {
    int pf = bk_gc_pause(from), pt = bk_gc_pause(to);
    int status = bk_transfer_copy_range_running(from, table, first, count, to, target, offset, what);
    bk_gc_resume(to, pt);
    bk_gc_resume(from, pf);
    return status;
}

int bk_transfer_check(lua_State *L, int idx, const char *what, int flags) {
    int paused = bk_gc_pause(L);
    int status = bk_transfer_check_running(L, idx, what, flags);
    bk_gc_resume(L, paused);
    return status;
}
