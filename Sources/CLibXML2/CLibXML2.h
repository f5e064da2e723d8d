// libxml2 as Debian installs it (pkg-config libxml-2.0 adds -I/usr/include/libxml2): the SAX2
// parser behind bk.XMLParser (Sources/XMLModule).
#include <libxml/parser.h>
#include <libxml/SAX2.h>
