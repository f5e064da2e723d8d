// Which upvalue a Lua function assigns to (bk_function_assignment): a block copied to the pool
// assigns to its copy's upvalue, and the caller never sees it (`sum = sum + x` in bk.apply). Read
// from the function's dump, as the compiler left it: OP_SETUPVAL assigns to an upvalue; a nested
// function's assignments count for the enclosing function's upvalues it captures. (Globals are
// another matter: a pool state's are its own by contract, and a block may keep things there.)
// Uses only lua_dump and lua_getupvalue, which never raise; the dump is malloc'd and freed
// before returning.
#include "CLuaShim.h"
#include "Dump.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Lua 5.4's OP_SETUPVAL (lopcodes.h) and its operand B (iABC: op 7 bits, A 8, k 1, B 8, C 8).
enum { BK_OP_SETUPVAL = 10 };
#define BK_OP(i) ((int)((i) & 0x7f))
#define BK_ARG_B(i) ((int)(((i) >> 16) & 0xff))

typedef struct bk_function_uses {
    unsigned char *assigned;        // one flag per upvalue (malloc'd)
    int count;
    const unsigned char *upvalues;  // the dump's upvalue descriptions: instack, idx, kind
} bk_function_uses;

static bk_function_uses bk_scan_function(bk_dump_reader *r, int depth) {
    bk_function_uses f = { NULL, 0, NULL };
    size_t length;
    if (depth > 250) r->failed = 1;
    bk_dump_string(r, &length);  // source
    bk_dump_int(r);              // linedefined
    bk_dump_int(r);              // lastlinedefined
    bk_dump_take(r, 3);          // numparams, is_vararg, maxstacksize
    int code_size = bk_dump_count(r, 4);
    const unsigned char *code = bk_dump_take(r, (size_t)code_size * 4);
    bk_dump_skip_constants(r);
    f.count = bk_dump_count(r, 3);
    f.upvalues = bk_dump_take(r, (size_t)f.count * 3);
    f.assigned = calloc(f.count > 0 ? (size_t)f.count : 1, 1);
    if (f.assigned == NULL) r->failed = 1;
    for (int pc = 0; pc < code_size && !r->failed && code != NULL; pc++) {
        uint32_t i;
        memcpy(&i, code + 4 * (size_t)pc, 4);  // dumped in the machine's own order
        if (BK_OP(i) == BK_OP_SETUPVAL && BK_ARG_B(i) < f.count) f.assigned[BK_ARG_B(i)] = 1;
    }
    int protos = bk_dump_count(r, 1);
    for (int p = 0; p < protos && !r->failed; p++) {
        bk_function_uses nested = bk_scan_function(r, depth + 1);
        for (int u = 0; u < nested.count && !r->failed; u++) {
            const unsigned char *desc = nested.upvalues + 3 * (size_t)u;
            // Captured from the enclosing function's upvalue desc[1] (not from one of its locals).
            if (nested.assigned[u] && desc[0] == 0 && desc[1] < f.count) f.assigned[desc[1]] = 1;
        }
        free(nested.assigned);
    }
    bk_dump_skip_debug(r);
    if (r->failed) {
        free(f.assigned);
        f.assigned = NULL;
        f.count = 0;
    }
    return f;
}

int bk_function_assignment(lua_State *L, int idx, char *reason, size_t size) {
    if (lua_type(L, idx) != LUA_TFUNCTION || lua_iscfunction(L, idx) || !lua_checkstack(L, 2)) return 0;
    bk_dump_buffer dump = { NULL, 0, 0, 0 };
    lua_pushvalue(L, idx);
    int status = lua_dump(L, bk_dump_buffer_write, &dump, 0);
    lua_pop(L, 1);
    bk_dump_reader r;
    bk_function_uses f = { NULL, 0, NULL };
    if (status == 0 && !dump.failed && bk_dump_open(&r, dump.bytes, dump.size)) f = bk_scan_function(&r, 0);
    // A dump that cannot be read (a binary chunk nested deeper than the scan goes) is refused:
    // its assignments are not known.
    if (f.assigned == NULL) {
        snprintf(reason, size, "could not be read for assignments to its upvalues");
        free(dump.bytes);
        return 1;
    }
    int found = 0;
    for (int u = 0; u < f.count && !found; u++) {
        if (!f.assigned[u]) continue;
        const char *name = lua_getupvalue(L, idx, u + 1);
        if (name == NULL) break;
        lua_pop(L, 1);
        // A stripped function's upvalues have no names (Lua says "(no name)"): by number then.
        if (name[0] == '\0' || strcmp(name, "(no name)") == 0)
            snprintf(reason, size, "assigns to upvalue #%d (a copy on the pool would assign to its own)", u + 1);
        else
            snprintf(reason, size, "assigns to upvalue '%.60s%s' (a copy on the pool would assign to its own)", name,
                     strlen(name) > 60 ? "..." : "");
        found = 1;
    }
    free(f.assigned);
    free(dump.bytes);
    return found;
}
