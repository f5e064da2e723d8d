-- bk.XMLParser's parser for the stock lua5.4, as a rock of its own on top of blocksbridge: one
-- file, bk/xml.so (the module `bk.xml`, ~22 KB), libxml2's SAX parser driven as Foundation's
-- XMLParser drives it, in C: it needs neither Foundation nor ICU nor the Swift toolchain (Debian's
-- libxml2; libxml2-dev to build). bk.so finds it on package.cpath at the first `p:parse()`, so
-- scripts only `require "bk"`.
-- In a checkout, after blocksbridge's own make:
--   luarocks --lua-version 5.4 make rockspecs/blocksbridge-xml-0.1.0-1.rockspec
-- Versions as blocksbridge's (the same tag): the module and bk.so meet through a C contract of
-- their own, so each version of this rock needs blocksbridge of the same VERSION.
rockspec_format = "3.0"
package = "blocksbridge-xml"
version = "0.1.0-1"
source = {
   -- Where the repository is served (as blocksbridge's rockspec); the tag of the version.
   url = "git+https://example.org/you/BlocksBridge.git",
   tag = "v0.1.0",
}
description = {
   summary = "bk.XMLParser for BlocksBridge's bk module, over libxml2",
   detailed = [[
      The parser behind bk.XMLParser (the bk module's XMLParser, driven by a dynamic delegate)
      for the stock Lua 5.4 interpreter: libxml2's SAX parser, without Foundation.
   ]],
   labels = { "swift", "xml" },
   -- The repository states no license yet (luarocks lint requires the field): set it on choosing one.
   license = "none stated yet",
}
dependencies = {
   "lua >= 5.4, < 5.5",
   "blocksbridge == 0.1.0",
}
external_dependencies = {
   LIBXML2 = { header = "libxml2/libxml/parser.h", library = "xml2" },
}
build = {
   -- Plain C (no Swift toolchain needed): luarocks compiles it as any C module (`make` in a
   -- checkout leaves bk/xml.so and the objects in it: .gitignore).
   type = "builtin",
   modules = {
      ["bk.xml"] = {
         sources = { "Sources/XMLModule/SAXParse.c", "Sources/XMLModule/ModuleEntry.c" },
         incdirs = { "Sources/XMLModule/include", "$(LIBXML2_INCDIR)/libxml2" },
         libraries = { "xml2" },
      },
   },
}
