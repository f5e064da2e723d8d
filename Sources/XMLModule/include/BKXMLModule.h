// bk.XMLParser's parser without Foundation: libbkxml.so (the `bkxml` product) and the rock's XML
// module (bk/xml.so, `require "bk.xml"`).
#ifndef BK_XML_MODULE_H
#define BK_XML_MODULE_H

#include <stdint.h>

/// One parse event; the contract with the bridge (DynamicDelegate/XMLParserPlugin.swift):
/// `strings` (with `lengths`, not NUL-terminated) are the delegate method's string arguments (NULL:
/// absent), `code` an error code, `line`/`column` the parser's position. Nonzero aborts the parse.
typedef int32_t (*bk_xml_event_callback)(void *context, int32_t event, const char *const *strings,
                                         const intptr_t *lengths, int32_t count, intptr_t code,
                                         intptr_t line, intptr_t column);

/// Parses `length` bytes at `bytes` (flags: 1 process namespaces, 2 report namespace prefixes),
/// calling `callback` for each delegate method, then once with `result`. Returns 0.
int32_t bk_xml_parse(const uint8_t *bytes, intptr_t length, int32_t flags, void *context,
                     bk_xml_event_callback callback);

#endif
