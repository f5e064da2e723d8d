// The debugger agent's key order (its natives `namedKeys` and `countNamed`): a table's keys sorted
// so that a client can page them (numbers, then strings by their bytes, then the rest, which the
// agent orders by their descriptions), in C because a 1e6-key table took 2.6 s sorted in Lua.
// Raw reads only (lua_next): no metamethod of the script's runs.
#include "CLuaShim.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct bk_key_number {
    int integer;
    lua_Integer i;
    lua_Number f;
    lua_Integer at;  // its place in the list of numbers collected
} bk_key_number;

typedef struct bk_key_string {  // 16 bytes: the radix sort moves them
    uint64_t prefix;  // its first 8 bytes, big-endian: most comparisons end there
    uint32_t at;      // its place in the list of strings collected (and in the texts)
} bk_key_string;

typedef struct bk_key_text {
    const char *s;  // a key kept alive by the list of strings collected
    size_t len;
} bk_key_text;

static int bk_key_number_compare(const void *a, const void *b) {
    const bk_key_number *x = a, *y = b;
    if (x->integer && y->integer) return (x->i > y->i) - (x->i < y->i);
    long double u = x->integer ? (long double)x->i : (long double)x->f;  // exact for 64-bit integers
    long double v = y->integer ? (long double)y->i : (long double)y->f;
    return (u > v) - (u < v);
}

static _Thread_local const bk_key_text *bk_key_texts;  // for the comparator (qsort has no context)

static int bk_key_string_compare(const void *a, const void *b) {
    const bk_key_string *x = a, *y = b;
    if (x->prefix != y->prefix) return x->prefix > y->prefix ? 1 : -1;
    const bk_key_text *u = &bk_key_texts[x->at - 1], *v = &bk_key_texts[y->at - 1];
    int c = memcmp(u->s, v->s, u->len < v->len ? u->len : v->len);
    if (c != 0) return c;
    return (u->len > v->len) - (u->len < v->len);
}

// Whether key (at the top) is a list position 1..n, which a paged table lists by index instead.
static int bk_key_is_position(lua_State *L, lua_Integer n) {
    if (n <= 0 || !lua_isinteger(L, -1)) return 0;
    lua_Integer k = lua_tointeger(L, -1);
    return k >= 1 && k <= n;
}

// countNamed(t, n): how many keys of t are not list positions 1..n (n 0: all keys).
static int bk_dbg_native_count_named(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_Integer n = luaL_optinteger(L, 2, 0);
    lua_Integer count = 0;
    lua_settop(L, 1);
    lua_pushnil(L);
    while (lua_next(L, 1)) {
        lua_pop(L, 1);
        if (!bk_key_is_position(L, n)) count++;
    }
    lua_pushinteger(L, count);
    return 1;
}

// Sorts strings by their prefixes (a radix sort, one pass per byte that differs), then each run
// of equal prefixes by the rest (qsort): 1e6 keys in ~0.2 s, where qsort alone took 0.35 s.
static void bk_key_sort_strings(bk_key_string *keys, bk_key_string *spare, size_t count, const bk_key_text *texts) {
    for (int shift = 0; shift < 64; shift += 8) {
        size_t counts[257] = { 0 };
        for (size_t i = 0; i < count; i++) counts[((keys[i].prefix >> shift) & 0xff) + 1]++;
        if (counts[((keys[0].prefix >> shift) & 0xff) + 1] == count) continue;  // one byte for all
        for (int b = 0; b < 256; b++) counts[b + 1] += counts[b];
        for (size_t i = 0; i < count; i++) spare[counts[(keys[i].prefix >> shift) & 0xff]++] = keys[i];
        memcpy(keys, spare, sizeof *keys * count);
    }
    bk_key_texts = texts;
    for (size_t i = 0, j; i < count; i = j) {
        for (j = i + 1; j < count && keys[j].prefix == keys[i].prefix; j++) {}
        if (j - i > 1) qsort(keys + i, j - i, sizeof *keys, bk_key_string_compare);
    }
    bk_key_texts = NULL;
}

// A userdata of `size` bytes replacing the one at `index` (its first `used` bytes copied over).
static void *bk_key_grow(lua_State *L, int index, size_t used, size_t size) {
    void *grown = lua_newuserdatauv(L, size, 0);
    memcpy(grown, lua_touserdata(L, index), used);
    lua_replace(L, index);
    return grown;
}

// namedKeys(t, n, hint): a list of t's numbers and strings but the positions 1..n, sorted, and a
// list of its other keys (booleans, tables, functions...), unsorted. `hint`: about how many keys
// (countNamed's), so that no list grows key by key. One traversal (lua_next is the cost: ~0.3 us
// a key of a large table); keys are copied from the lists collected, never made again. Buffers
// are userdata, not malloc'd: a raise (out of memory) leaves nothing to free.
static int bk_dbg_native_named_keys(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_Integer n = luaL_optinteger(L, 2, 0);
    lua_Integer hint = luaL_optinteger(L, 3, 0);
    size_t capacity = hint > 1024 && hint < 100000000 ? (size_t)hint : 1024;
    lua_settop(L, 1);
    lua_newtable(L);                                 // 2: numbers
    lua_createtable(L, (int)capacity, 0);            // 3: strings (they keep the keys alive)
    lua_newtable(L);                                 // 4: others
    bk_key_string *string = lua_newuserdatauv(L, sizeof *string * capacity, 0);  // 5
    bk_key_text *text = lua_newuserdatauv(L, sizeof *text * capacity, 0);        // 6
    lua_Integer numbers = 0, others = 0;
    size_t strings = 0;
    lua_pushnil(L);
    while (lua_next(L, 1)) {
        lua_pop(L, 1);
        int type = lua_type(L, -1);
        if (type == LUA_TNUMBER && bk_key_is_position(L, n)) continue;
        if (type == LUA_TSTRING) {
            if (strings == UINT32_MAX) continue;
            if (strings == capacity) {
                string = bk_key_grow(L, 5, sizeof *string * capacity, sizeof *string * capacity * 2);
                text = bk_key_grow(L, 6, sizeof *text * capacity, sizeof *text * capacity * 2);
                capacity *= 2;
            }
            size_t len;
            const char *s = lua_tolstring(L, -1, &len);  // a string: not converted
            uint64_t prefix = 0;
            for (size_t b = 0; b < 8; b++) prefix = (prefix << 8) | (b < len ? (unsigned char)s[b] : 0);
            strings++;
            string[strings - 1] = (bk_key_string){ prefix, (uint32_t)strings };
            text[strings - 1] = (bk_key_text){ s, len };
        }
        lua_pushvalue(L, -1);
        if (type == LUA_TNUMBER) lua_rawseti(L, 2, ++numbers);
        else if (type == LUA_TSTRING) lua_rawseti(L, 3, (lua_Integer)strings);
        else lua_rawseti(L, 4, ++others);
    }
    bk_key_number *number = lua_newuserdatauv(L, sizeof *number * (size_t)(numbers ? numbers : 1), 0);  // 7
    for (lua_Integer i = 0; i < numbers; i++) {
        lua_rawgeti(L, 2, i + 1);
        int integer = lua_isinteger(L, -1);
        number[i] = (bk_key_number){ integer, integer ? lua_tointeger(L, -1) : 0, integer ? 0 : lua_tonumber(L, -1), i + 1 };
        lua_pop(L, 1);
    }
    qsort(number, (size_t)numbers, sizeof *number, bk_key_number_compare);
    if (strings > 1) bk_key_sort_strings(string, lua_newuserdatauv(L, sizeof *string * strings, 0), strings, text);
    lua_Integer total = numbers + (lua_Integer)strings;
    lua_createtable(L, (int)(total < 10000000 ? total : 10000000), 0);
    int list = lua_gettop(L);
    lua_Integer at = 0;
    for (lua_Integer i = 0; i < numbers; i++) {
        lua_rawgeti(L, 2, number[i].at);
        lua_rawseti(L, list, ++at);
    }
    for (size_t i = 0; i < strings; i++) {
        lua_rawgeti(L, 3, string[i].at);
        lua_rawseti(L, list, ++at);
    }
    lua_pushvalue(L, 4);
    return 2;
}

void bk_debugger_push_key_natives(lua_State *L) {
    lua_pushcfunction(L, bk_dbg_native_named_keys);
    lua_setfield(L, -2, "namedKeys");
    lua_pushcfunction(L, bk_dbg_native_count_named);
    lua_setfield(L, -2, "countNamed");
}
