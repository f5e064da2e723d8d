// Lua 5.4 as Debian installs it (pkg-config lua5.4 adds -I/usr/include/lua5.4).
#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>
