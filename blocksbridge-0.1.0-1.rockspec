-- The `bk` module for the stock lua5.4: one file, bk.so, with the Swift runtime linked in (release,
-- -static-stdlib), so the rock installs nothing else and needs no Swift library where it runs.
-- Building needs the Swift 6 toolchain: `luarocks --lua-version 5.4 make` in a checkout
-- (`--local`: ~/.luarocks, then `eval "$(luarocks --lua-version 5.4 path)"`). bk.XMLParser's
-- parser is the optional rock blocksbridge-xml (rockspecs/). Versions: VERSION-REVISION, VERSION being bk.version()'s (scripts/test checks it)
-- and the tag `vVERSION`; REVISION counts changes of this file for one VERSION (luarocks' scheme).
rockspec_format = "3.0"
package = "blocksbridge"
version = "0.1.0-1"
source = {
   -- Where the repository is served (as the README's Package.swift example); the tag of the version.
   url = "git+https://example.org/you/BlocksBridge.git",
   tag = "v0.1.0",
}
description = {
   summary = "BlocksKit's block helpers for Lua 5.4, implemented in Swift",
   detailed = [[
      The bk module: collections with blocks, associated objects, invocations, an event loop
      with queues and timers, tasks, worker states and channels, key-path observation, dynamic
      delegates and event handlers.
   ]],
   labels = { "swift", "blocks", "observation", "event-loop" },
   -- The repository states no license yet (luarocks lint requires the field): set it on choosing one.
   license = "none stated yet",
}
dependencies = {
   "lua >= 5.4, < 5.5",
}
build = {
   type = "command",
   build_command = "scripts/build-module --without-xml .build/luarocks",
   install_command = "cp -f .build/luarocks/bk.so '$(LIBDIR)/'",
}
