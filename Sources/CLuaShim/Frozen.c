// Frozen tables (bk.freeze): a read-only view of a table and the tables it reaches.
//
// A view is an empty table with a metatable of its own whose `__index` is the view's contents: a
// table holding what the frozen table held, with each nested table replaced by its view (made
// once per table, so cycles and identity are kept). Reads are then plain table reads (no function
// call per read); `__newindex` raises, `__len` and `__pairs` read the contents. Views are known
// only by the registry (`views`: view -> {contents, id}, weak keys), never by a field a script
// could forge. Each view has an id unique in the process: a frozen table copied to another state
// (Transfer.c) is kept there under its id and reused by later copies, since it cannot change.
#include "CLuaShim.h"
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

// Registry keys (light userdata).
static const char bk_frozen_views_key = 'v';    // view -> {contents, id} (weak keys)
static const char bk_frozen_wrapped_key = 'w';  // frozen table -> its view (weak keys)
static const char bk_frozen_ids_key = 'i';      // id -> view (weak values)
static const char bk_frozen_kept_key = 'k';     // id -> view copied in from another state (strong)

// Copies from other states kept at most (then the keep is emptied: a state that receives
// ever new frozen tables does not keep them all).
#define BK_FROZEN_KEPT_MAX 64
#define BK_FROZEN_MAX_DEPTH 200

static void bk_frozen_build(lua_State *L, int idx, int depth);

static atomic_llong bk_frozen_next_id = 1;

// MARK: - Looking views up (raw, no allocation)

lua_Integer bk_frozen_contents(lua_State *L, int idx) {
    if (lua_type(L, idx) != LUA_TTABLE) return 0;
    idx = lua_absindex(L, idx);
    if (lua_rawgetp(L, LUA_REGISTRYINDEX, &bk_frozen_views_key) != LUA_TTABLE) {
        lua_pop(L, 1);
        return 0;
    }
    lua_pushvalue(L, idx);
    if (lua_rawget(L, -2) != LUA_TTABLE) {
        lua_pop(L, 2);
        return 0;
    }
    lua_rawgeti(L, -1, 2);
    lua_Integer id = lua_isinteger(L, -1) ? lua_tointeger(L, -1) : 0;
    lua_pop(L, 1);
    if (id <= 0 || lua_rawgeti(L, -1, 1) != LUA_TTABLE) {
        lua_pop(L, 3);
        return 0;
    }
    lua_replace(L, -3);  // contents, record
    lua_pop(L, 1);
    return id;
}

int bk_frozen_has_own_keys(lua_State *L, int idx) {
    idx = lua_absindex(L, idx);
    lua_pushnil(L);
    if (lua_next(L, idx)) {
        lua_pop(L, 2);
        return 1;
    }
    return 0;
}

// MARK: - Making views (may allocate and raise: called from Lua or inside a protected call)

// Pushes registry[key], made (a table with `mode` as __mode, or none) when missing.
static int bk_frozen_registry_table(lua_State *L, const void *key, const char *mode) {
    if (lua_rawgetp(L, LUA_REGISTRYINDEX, key) == LUA_TTABLE) return lua_gettop(L);
    lua_pop(L, 1);
    lua_newtable(L);
    if (mode != NULL) {
        lua_createtable(L, 0, 1);
        lua_pushstring(L, mode);
        lua_setfield(L, -2, "__mode");
        lua_setmetatable(L, -2);
    }
    lua_pushvalue(L, -1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, key);
    return lua_gettop(L);
}

static void bk_frozen_push_metatable(lua_State *L, int contents);

// Pushes a new view of the (still empty or filled) `contents` with `id` and records it (by id;
// and as the view of `source` when it is not 0).
static void bk_frozen_push_new_view(lua_State *L, int contents, lua_Integer id, int source) {
    contents = lua_absindex(L, contents);
    if (source != 0) source = lua_absindex(L, source);
    luaL_checkstack(L, 8, "frozen table");
    int views = bk_frozen_registry_table(L, &bk_frozen_views_key, "k");
    int ids = bk_frozen_registry_table(L, &bk_frozen_ids_key, "v");
    lua_newtable(L);
    int view = lua_gettop(L);
    bk_frozen_push_metatable(L, contents);
    lua_setmetatable(L, view);
    lua_pushvalue(L, view);
    lua_createtable(L, 2, 0);
    lua_pushvalue(L, contents);
    lua_rawseti(L, -2, 1);
    lua_pushinteger(L, id);
    lua_rawseti(L, -2, 2);
    lua_rawset(L, views);
    lua_pushvalue(L, view);
    lua_rawseti(L, ids, id);
    if (source != 0) {
        int wrapped = bk_frozen_registry_table(L, &bk_frozen_wrapped_key, "k");
        lua_pushvalue(L, source);
        lua_pushvalue(L, view);
        lua_rawset(L, wrapped);
        lua_pop(L, 1);
    }
    lua_replace(L, views);
    lua_settop(L, views);
}

// Pushes the view of the (checked) table at `idx`: itself when it is a view, the view made
// before for it, else a new one whose contents hold its entries, nested tables as their views.
static void bk_frozen_build(lua_State *L, int idx, int depth) {
    idx = lua_absindex(L, idx);
    // The check bounded the depth; a finalizer may have changed the tables since.
    if (depth > BK_FROZEN_MAX_DEPTH) luaL_error(L, "the table is nested too deeply");
    luaL_checkstack(L, 8, "frozen table");
    if (bk_frozen_contents(L, idx)) {
        lua_pop(L, 1);
        lua_pushvalue(L, idx);
        return;
    }
    if (lua_rawgetp(L, LUA_REGISTRYINDEX, &bk_frozen_wrapped_key) == LUA_TTABLE) {
        lua_pushvalue(L, idx);
        if (lua_rawget(L, -2) == LUA_TTABLE) {
            lua_remove(L, -2);
            return;
        }
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    lua_Unsigned length = lua_rawlen(L, idx);
    lua_createtable(L, length > (1 << 14) ? (1 << 14) : (int)length, 0);  // a hint only
    int contents = lua_gettop(L);
    if (lua_getmetatable(L, idx)) lua_setmetatable(L, contents);  // a bk kind's (checked): kind and methods
    // The view first, so that a cycle back to this table finds it.
    bk_frozen_push_new_view(L, contents, (lua_Integer)atomic_fetch_add(&bk_frozen_next_id, 1), idx);
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        if (lua_type(L, -1) == LUA_TTABLE) {
            bk_frozen_build(L, -1, depth + 1);
            lua_replace(L, -2);
        }
        lua_pushvalue(L, -2);
        lua_insert(L, -2);
        lua_rawset(L, contents);
    }
    lua_remove(L, contents);
}

// Pushes the contents of the view at argument 1 (raises when it is not a view: a metamethod
// called directly).
static void bk_frozen_check_view(lua_State *L) {
    if (!bk_frozen_contents(L, 1)) luaL_typeerror(L, 1, "frozen table");
}

// MARK: - The metamethods

// Pushes a description of the key at `idx` for messages ("key 'name'", "key 3").
static void bk_frozen_push_key(lua_State *L, int idx) {
    switch (lua_type(L, idx)) {
        case LUA_TSTRING: lua_pushfstring(L, "key '%s'", lua_tostring(L, idx)); break;
        case LUA_TNUMBER:
            if (lua_isinteger(L, idx)) lua_pushfstring(L, "key %I", (LUAI_UACINT)lua_tointeger(L, idx));
            else lua_pushfstring(L, "key %f", (LUAI_UACNUMBER)lua_tonumber(L, idx));
            break;
        default: lua_pushfstring(L, "a %s key", luaL_typename(L, idx)); break;
    }
}

static int bk_frozen_newindex(lua_State *L) {
    bk_frozen_check_view(L);
    luaL_where(L, 1);
    bk_frozen_push_key(L, 2);
    lua_pushfstring(L, "%sattempt to modify a frozen table (%s)", lua_tostring(L, -2), lua_tostring(L, -1));
    return lua_error(L);
}

static int bk_frozen_len(lua_State *L) {
    bk_frozen_check_view(L);
    lua_pushinteger(L, (lua_Integer)lua_rawlen(L, -1));
    return 1;
}

// The iterator of pairs(view): next over the contents (the view, not the contents, is its state,
// so a script never holds the contents).
static int bk_frozen_next(lua_State *L) {
    lua_settop(L, 2);
    bk_frozen_check_view(L);
    lua_pushvalue(L, 2);
    if (!lua_next(L, 3)) {
        lua_pushnil(L);
        return 1;
    }
    return 2;
}

static int bk_frozen_pairs(lua_State *L) {
    bk_frozen_check_view(L);
    lua_pushcfunction(L, bk_frozen_next);
    lua_pushvalue(L, 1);
    lua_pushnil(L);
    return 3;
}

// Each view has a metatable of its own: its `__index` is the view's contents (a table, so a read
// is a plain table read).
static void bk_frozen_push_metatable(lua_State *L, int contents) {
    lua_createtable(L, 0, 6);
    lua_pushvalue(L, contents);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, bk_frozen_newindex);
    lua_setfield(L, -2, "__newindex");
    lua_pushcfunction(L, bk_frozen_len);
    lua_setfield(L, -2, "__len");
    lua_pushcfunction(L, bk_frozen_pairs);
    lua_setfield(L, -2, "__pairs");
    lua_pushliteral(L, "bk.frozen");
    lua_setfield(L, -2, "__name");
    lua_pushliteral(L, "bk.frozen");  // getmetatable(view); setmetatable(view, ...) is refused
    lua_setfield(L, -2, "__metatable");
}

// MARK: - bk.freeze's check and view

// The walk over what is frozen: only data may be frozen (a function or userdata could change).
typedef struct bk_freeze_walk {
    int memo;        // table -> true, for cycles and shared tables
    int null;        // bk.null (or nil)
    int depth;
    char path[400];  // where the walk is, for the message ("field 'a' of element [2] of ")
} bk_freeze_walk;

static void bk_freeze_fail(lua_State *L, bk_freeze_walk *w, const char *what) {
    lua_pushfstring(L, "%sthe table %s", w->path, what);
    lua_error(L);
}

static void bk_freeze_value(lua_State *L, bk_freeze_walk *w, int idx);

static void bk_freeze_table(lua_State *L, bk_freeze_walk *w, int idx) {
    lua_pushvalue(L, idx);
    if (lua_rawget(L, w->memo) != LUA_TNIL) {
        lua_pop(L, 1);
        return;
    }
    lua_pop(L, 1);
    lua_pushvalue(L, idx);
    lua_pushboolean(L, 1);
    lua_rawset(L, w->memo);
    if (bk_frozen_contents(L, idx)) {  // a view already: it was checked when it was made
        lua_pop(L, 1);
        return;
    }
    if (lua_getmetatable(L, idx)) {
        // bk's kinds are fine (their metatables hold only helpers); an observed table keeps its
        // values elsewhere, and any other metatable is behaviour a view would drop.
        lua_pushliteral(L, "__bkkind");
        int kind = lua_rawget(L, -2) == LUA_TNUMBER;
        lua_pushliteral(L, "__bkobserved");
        int observed = lua_rawget(L, -3) != LUA_TNIL;
        lua_pop(L, 3);
        if (!kind) bk_freeze_fail(L, w, "has a metatable (only plain tables and bk collections can be frozen)");
        if (observed) bk_freeze_fail(L, w, "is observed (end the observation before freezing it)");
    }
    if (w->depth >= BK_FROZEN_MAX_DEPTH) bk_freeze_fail(L, w, "is nested too deeply");
    luaL_checkstack(L, 6, "frozen table");
    w->depth++;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        int key = lua_gettop(L) - 1;
        char segment[96];
        switch (lua_type(L, key)) {
            case LUA_TSTRING: snprintf(segment, sizeof segment, "field '%.60s' of ", lua_tostring(L, key)); break;
            case LUA_TNUMBER:
                if (lua_isinteger(L, key)) snprintf(segment, sizeof segment, "element [%lld] of ", (long long)lua_tointeger(L, key));
                else snprintf(segment, sizeof segment, "a field of ");
                break;
            default: snprintf(segment, sizeof segment, "a field of "); break;
        }
        char keysegment[] = "a key of ";
        // The path reads innermost first: the new segment goes in front.
        char old[sizeof w->path];
        memcpy(old, w->path, sizeof old);
        snprintf(w->path, sizeof w->path, "%s%s", keysegment, old);
        bk_freeze_value(L, w, key);
        snprintf(w->path, sizeof w->path, "%s%s", segment, old);
        bk_freeze_value(L, w, key + 1);
        memcpy(w->path, old, sizeof old);
        lua_pop(L, 1);
    }
    w->depth--;
}

static void bk_freeze_value(lua_State *L, bk_freeze_walk *w, int idx) {
    switch (lua_type(L, idx)) {
        case LUA_TNIL: case LUA_TBOOLEAN: case LUA_TNUMBER: case LUA_TSTRING: return;
        case LUA_TTABLE: bk_freeze_table(L, w, idx); return;
        case LUA_TUSERDATA:
            if (lua_rawequal(L, idx, w->null)) return;
            bk_freeze_fail(L, w, "is a userdata, which cannot be frozen (only tables, strings, numbers, booleans and bk.null can)");
            return;
        default: {
            char what[160];
            snprintf(what, sizeof what, "is a %s, which cannot be frozen (only tables, strings, numbers, booleans and bk.null can)",
                     luaL_typename(L, idx));
            bk_freeze_fail(L, w, what);
        }
    }
}

// Protected: argument 1 a table, 2 bk.null. Checks what it reaches and returns its view.
static int bk_freeze_run(lua_State *L) {
    bk_freeze_walk w;
    memset(&w, 0, sizeof w);
    lua_settop(L, 2);
    w.null = 2;
    lua_newtable(L);
    w.memo = 3;
    bk_freeze_table(L, &w, 1);  // the whole check first: a failed freeze leaves no view behind
    bk_frozen_build(L, 1, 0);
    return 1;
}

int bk_frozen_freeze(lua_State *L, int idx, int null) {
    idx = lua_absindex(L, idx);
    null = lua_absindex(L, null);
    if (!lua_checkstack(L, 4)) return LUA_ERRMEM;
    lua_pushcfunction(L, bk_freeze_run);
    lua_pushvalue(L, idx);
    lua_pushvalue(L, null);
    return bk_pcall(L, 2, 1, 0);
}

// MARK: - Crossing states (called by Transfer.c inside its protected call of `to`)

int bk_frozen_push_kept(lua_State *to, lua_Integer id) {
    if (lua_rawgetp(to, LUA_REGISTRYINDEX, &bk_frozen_ids_key) != LUA_TTABLE) {
        lua_pop(to, 1);
        return 0;
    }
    if (lua_rawgeti(to, -1, id) != LUA_TTABLE || bk_frozen_contents(to, -1) != id) {
        lua_pop(to, 2);
        return 0;
    }
    lua_pop(to, 1);      // the contents
    lua_remove(to, -2);  // the ids table
    return 1;
}

void bk_frozen_push_copied_view(lua_State *to, int contents, lua_Integer id) {
    contents = lua_absindex(to, contents);
    bk_frozen_push_new_view(to, contents, id, 0);
    int kept = bk_frozen_registry_table(to, &bk_frozen_kept_key, NULL);
    lua_pushliteral(to, "count");
    lua_rawget(to, kept);
    lua_Integer count = lua_isinteger(to, -1) ? lua_tointeger(to, -1) : 0;
    lua_pop(to, 1);
    if (count >= BK_FROZEN_KEPT_MAX) {
        lua_pop(to, 1);
        lua_pushnil(to);
        lua_rawsetp(to, LUA_REGISTRYINDEX, &bk_frozen_kept_key);
        kept = bk_frozen_registry_table(to, &bk_frozen_kept_key, NULL);
        count = 0;
    }
    lua_pushliteral(to, "count");
    lua_pushinteger(to, count + 1);
    lua_rawset(to, kept);
    lua_pushvalue(to, -2);
    lua_rawseti(to, kept, id);
    lua_pop(to, 1);
}
