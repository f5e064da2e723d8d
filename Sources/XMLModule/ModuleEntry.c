// `require "bk.xml"`: the module's Lua face. bk.XMLParser finds bk_xml_parse in this library by
// itself (package.cpath, as require would), so scripts need not require it; requiring it gives
// bk.XMLParser (after `require "bk"`), so the module is an ordinary one to Lua and to luarocks.
#include <lua.h>
#include <lauxlib.h>

int luaopen_bk_xml(lua_State *L);

int luaopen_bk_xml(lua_State *L) {
    lua_getglobal(L, "require");
    lua_pushliteral(L, "bk");
    lua_call(L, 1, 1);
    lua_getfield(L, -1, "XMLParser");
    return 1;
}
