// Tracebacks (bk_luatraceback): only the official Lua API, as lauxlib.c. Mirrors luaL_traceback
// of Lua 5.4.6 (lauxlib.c, "Traceback"); differs in pushfuncname: the name the calling code used
// is tried before the first global name found (see CLuaShimTraceback.h).
#include "CLuaShimTraceback.h"
#include <lauxlib.h>
#include <string.h>

#define LEVELS1 10  /* size of the first part of the stack */
#define LEVELS2 11  /* size of the second part of the stack */

/* Search for 'objidx' in table at index -1 ('level' is the maximum level to go). */
static int findfield(lua_State *L, int objidx, int level) {
    if (level == 0 || !lua_istable(L, -1)) return 0;
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        if (lua_type(L, -2) == LUA_TSTRING) {
            if (lua_rawequal(L, objidx, -1)) {
                lua_pop(L, 1);
                return 1;
            } else if (findfield(L, objidx, level - 1)) {
                lua_pushliteral(L, ".");
                lua_replace(L, -3);
                lua_concat(L, 3);
                return 1;
            }
        }
        lua_pop(L, 1);
    }
    return 0;
}

/* Differs: the module field named as the code called it ('bk.map' for bk.map(...), 'bk_map' for
   bk_map(...), the global table's prefix dropped), if some loaded module holds the function there. */
static int pushcalledname(lua_State *L, lua_Debug *ar) {
    if (ar->name == NULL || *ar->namewhat == '\0') return 0;
    int top = lua_gettop(L);
    lua_getinfo(L, "f", ar);                                  /* top + 1: the function */
    lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);     /* top + 2: package.loaded */
    luaL_checkstack(L, 4, "not enough stack");
    lua_pushnil(L);
    while (lua_next(L, top + 2)) {                            /* top + 3: module name, top + 4: module */
        if (lua_type(L, top + 3) == LUA_TSTRING && lua_type(L, top + 4) == LUA_TTABLE) {
            lua_pushstring(L, ar->name);
            lua_rawget(L, top + 4);
            int found = lua_rawequal(L, -1, top + 1);
            lua_pop(L, 1);
            if (found) {
                const char *module = lua_tostring(L, top + 3);
                if (strcmp(module, LUA_GNAME) == 0) lua_pushstring(L, ar->name);
                else lua_pushfstring(L, "%s.%s", module, ar->name);
                lua_replace(L, top + 1);
                lua_settop(L, top + 1);
                return 1;
            }
        }
        lua_pop(L, 1);
    }
    lua_settop(L, top);
    return 0;
}

static int pushglobalfuncname(lua_State *L, lua_Debug *ar) {
    int top = lua_gettop(L);
    if (pushcalledname(L, ar)) return 1;
    lua_getinfo(L, "f", ar);
    lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
    luaL_checkstack(L, 6, "not enough stack");
    if (findfield(L, top + 1, 2)) {
        const char *name = lua_tostring(L, -1);
        if (strncmp(name, LUA_GNAME ".bk_", 6) == 0) {
            /* Differs: a bk_NAME global that is also bk.NAME is named bk.NAME (a call through a
               local or an upvalue says nothing of how the function was reached). */
            lua_getfield(L, top + 2, "bk");
            if (lua_type(L, -1) == LUA_TTABLE) {
                lua_getfield(L, -1, name + 6);
                int same = lua_rawequal(L, -1, top + 1);
                lua_pop(L, 2);
                if (same) {
                    lua_pushfstring(L, "bk.%s", name + 6);
                    lua_remove(L, -2);
                }
            } else {
                lua_pop(L, 1);
            }
        }
        name = lua_tostring(L, -1);
        if (strncmp(name, LUA_GNAME ".", 3) == 0) {
            lua_pushstring(L, name + 3);
            lua_remove(L, -2);
        }
        lua_copy(L, -1, top + 1);
        lua_settop(L, top + 1);
        return 1;
    }
    lua_settop(L, top);
    return 0;
}

static void pushfuncname(lua_State *L, lua_Debug *ar) {
    if (pushglobalfuncname(L, ar)) {
        lua_pushfstring(L, "function '%s'", lua_tostring(L, -1));
        lua_remove(L, -2);
    } else if (*ar->namewhat != '\0') {
        lua_pushfstring(L, "%s '%s'", ar->namewhat, ar->name);
    } else if (*ar->what == 'm') {
        lua_pushliteral(L, "main chunk");
    } else if (*ar->what != 'C') {
        lua_pushfstring(L, "function <%s:%d>", ar->short_src, ar->linedefined);
    } else {
        lua_pushliteral(L, "?");
    }
}

static int lastlevel(lua_State *L) {
    lua_Debug ar;
    int li = 1, le = 1;
    while (lua_getstack(L, le, &ar)) { li = le; le *= 2; }
    while (li < le) {
        int m = (li + le) / 2;
        if (lua_getstack(L, m, &ar)) li = m + 1;
        else le = m;
    }
    return le - 1;
}

void bk_luatraceback(lua_State *L, lua_State *L1, const char *msg, int level) {
    luaL_Buffer b;
    lua_Debug ar;
    int last = lastlevel(L1);
    int limit2show = (last - level > LEVELS1 + LEVELS2) ? LEVELS1 : -1;
    luaL_buffinit(L, &b);
    if (msg) {
        luaL_addstring(&b, msg);
        luaL_addchar(&b, '\n');
    }
    luaL_addstring(&b, "stack traceback:");
    while (lua_getstack(L1, level++, &ar)) {
        if (limit2show-- == 0) {
            int n = last - level - LEVELS2 + 1;
            lua_pushfstring(L, "\n\t...\t(skipping %d levels)", n);
            luaL_addvalue(&b);
            level += n;
        } else {
            lua_getinfo(L1, "Slnt", &ar);
            /* Differs: the bridge's own Lua (chunks named "=bk/...": its task engine, observation
               engine, ...) is not the user's code, and its frames are left out. */
            if (strncmp(ar.source, "=bk/", 4) == 0) continue;
            if (ar.currentline <= 0) lua_pushfstring(L, "\n\t%s: in ", ar.short_src);
            else lua_pushfstring(L, "\n\t%s:%d: in ", ar.short_src, ar.currentline);
            luaL_addvalue(&b);
            pushfuncname(L, &ar);
            luaL_addvalue(&b);
            if (ar.istailcall) luaL_addstring(&b, "\n\t(...tail calls...)");
        }
    }
    luaL_pushresult(&b);
}
