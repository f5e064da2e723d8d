// What a state prints outside of Lua code: the panic function and warnings luaL_newstate would
// install (lua_newstate with our allocator does not), and writes to the C stdio streams Lua's own
// print uses. Mirrors lauxlib.c's panic and warnf functions (Lua 5.4.6).
#include "CLuaShim.h"
#include <stdio.h>
#include <string.h>

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

// {====== Standard streams

void bk_write_stdout(const char *s, size_t n) {
    fwrite(s, 1, n, stdout);
    fflush(stdout);
}

void bk_write_stderr(const char *s, size_t n) {
    fflush(stdout);  // keep stdout and stderr in the order they were written
    fwrite(s, 1, n, stderr);
    fflush(stderr);
}

