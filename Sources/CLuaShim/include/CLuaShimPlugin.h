// Loading a library of the bridge's own at first use (libbkxml.so: Foundation's XMLParser).
#ifndef CLUASHIM_PLUGIN_H
#define CLUASHIM_PLUGIN_H

#include <stddef.h>

/// The address of `symbol`: already loaded (a host linked the library), else from `library` in the
/// directory of the image holding the bridge (bklua, bk.so, a host), else from `library` found as
/// dlopen finds it (RUNPATH, LD_LIBRARY_PATH). NULL with a message in `error` when none has it.
void *bk_plugin_symbol(const char *library, const char *symbol, char *error, size_t error_size);

/// The address of `symbol` in the library at `path` (a Lua C module found on package.cpath, such as
/// the rock's bk/xml.so). NULL with "" in `error` when there is no such file, with a message when
/// the file does not load or lacks the symbol.
void *bk_plugin_symbol_at(const char *path, const char *symbol, char *error, size_t error_size);

#endif
