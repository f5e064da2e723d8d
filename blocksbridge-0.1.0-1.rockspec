-- `luarocks --lua-version 5.4 make` in a checkout builds bk.so (release; BK_CONFIGURATION=debug for
-- a debug build) and installs it with the Swift runtime libraries it needs beside it, where lua5.4
-- finds it: then `lua5.4 -e 'local bk = require "bk"'` works without LUA_CPATH or LD_LIBRARY_PATH
-- (`--local`: ~/.luarocks, add `eval "$(luarocks --lua-version 5.4 path)"`). Needs the Swift 6
-- toolchain to build. The version is bk.version()'s (scripts/test checks it after installing).
rockspec_format = "3.0"
package = "blocksbridge"
version = "0.1.0-1"
source = {
   url = "git+file:///dev/null",  -- built from a checkout with `luarocks make`; not published
}
description = {
   summary = "BlocksKit's block helpers for Lua 5.4, implemented in Swift",
   detailed = [[
      The bk module: collections with blocks, associated objects, invocations, an event loop
      with queues and timers, key-path observation, dynamic delegates and event handlers.
   ]],
   labels = { "swift", "blocks", "observation", "event-loop" },
}
dependencies = {
   "lua >= 5.4, < 5.5",
}
build = {
   type = "command",
   build_command = "scripts/build-module --with-runtime .build/luarocks",
   install_command = "cp -f .build/luarocks/*.so '$(LIBDIR)/'",
}
