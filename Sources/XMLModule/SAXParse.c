// bk_xml_parse over libxml2's SAX2 parser, driven exactly as corelibs FoundationXML's XMLParser
// drives it (the same handlers, options, first 4-byte chunk and events), so that bk.XMLParser behaves
// as Foundation's XMLParser, without Foundation and its ICU (~58 MB linked statically), and without
// its crashes (`<?pi?>`, a NOTATION with no public id). Both libbkxml.so (the `bkxml` product, for
// bklua, hosts and scripts/build-module) and the rock's bk/xml.so are this file. Events and codes:
// the bridge's Sources/BlocksBridge/DynamicDelegate/XMLParserPlugin.swift.
#include "BKXMLModule.h"
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/SAX2.h>
#include <libxml/entities.h>
#include <libxml/xmlerror.h>
#include <libxml/globals.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

// The events, in the order of XMLParserDelegate's methods (the Swift side's `Event`).
enum {
    START_DOCUMENT = 1, END_DOCUMENT, START_ELEMENT, END_ELEMENT, START_MAPPING_PREFIX, END_MAPPING_PREFIX,
    CHARACTERS, IGNORABLE_WHITESPACE, PROCESSING_INSTRUCTION, COMMENT, CDATA, PARSE_ERROR, VALIDATION_ERROR,
    RESULT, RESULT_ERROR,
};

// XMLParser.ErrorCode.outOfMemoryError: the push parser could not be made.
enum { OUT_OF_MEMORY = 2 };

typedef struct {
    xmlParserCtxtPtr parser;  // NULL until the first 4 bytes made it
    int32_t flags;
    void *context;
    bk_xml_event_callback callback;
    /// An entity reference was just resolved in content: its text, reported next, is skipped
    /// (FoundationXML's "recursive state").
    int skipCharacters;
    /// The last error reported (XMLParser.parserError's code), 0: none.
    int errorCode;
    /// Prefixes whose mapping started, for their end after their element's end (flags & 2):
    /// `prefixes` holds them all, `marks[i]` how many there were before open element i.
    char **prefixes;
    size_t prefixCount, prefixCapacity;
    size_t *marks;
    size_t markCount, markCapacity;
} Parse;

static void send(Parse *parse, int32_t event, const char *const *strings, const intptr_t *lengths,
                 int32_t count, intptr_t code) {
    xmlParserCtxtPtr parser = parse->parser;
    intptr_t line = parser != NULL ? xmlSAX2GetLineNumber(parser) : 0;
    intptr_t column = parser != NULL ? xmlSAX2GetColumnNumber(parser) : 0;
    if (parse->callback(parse->context, event, strings, lengths, count, code, line, column) != 0 && parser != NULL)
        xmlStopParser(parser);
}

static void sendString(Parse *parse, int32_t event, const xmlChar *string) {
    const char *strings[1] = {(const char *)string};
    intptr_t lengths[1] = {string != NULL ? (intptr_t)strlen((const char *)string) : 0};
    send(parse, event, strings, lengths, 1, 0);
}

static char *joined(const xmlChar *prefix, const char *separator, const xmlChar *name) {
    size_t a = strlen((const char *)prefix), b = strlen(separator), c = strlen((const char *)name);
    char *text = malloc(a + b + c + 1);
    if (text == NULL) return NULL;
    memcpy(text, prefix, a);
    memcpy(text + a, separator, b);
    memcpy(text + a + b, name, c + 1);
    return text;
}

static void outOfMemory(Parse *parse) {
    parse->errorCode = OUT_OF_MEMORY;
    if (parse->parser != NULL) xmlStopParser(parse->parser);
}

static int grow(void **items, size_t *capacity, size_t count, size_t size) {
    if (count < *capacity) return 1;
    size_t next = *capacity ? *capacity * 2 : 16;
    void *grown = realloc(*items, next * size);
    if (grown == NULL) return 0;
    *items = grown;
    *capacity = next;
    return 1;
}

// MARK: Document and elements

static void startDocument(void *ctx) { send(ctx, START_DOCUMENT, NULL, NULL, 0, 0); }
static void endDocument(void *ctx) { send(ctx, END_DOCUMENT, NULL, NULL, 0, 0); }

/// The element's name, namespace URI and qualified name as XMLParser gives them: with namespace
/// processing, (local name, URI or "", prefix:local); without, (prefix:local, nil, nil).
/// `owned` receives what to free.
static void names(Parse *parse, const xmlChar *localname, const xmlChar *prefix, const xmlChar *URI,
                  const char *out[3], char **owned) {
    *owned = prefix != NULL ? joined(prefix, ":", localname) : NULL;
    const char *qualified = *owned != NULL ? *owned : (const char *)localname;
    if (parse->flags & 1) {
        out[0] = (const char *)localname;
        out[1] = URI != NULL ? (const char *)URI : "";
        out[2] = qualified;
    } else {
        out[0] = qualified;
        out[1] = NULL;
        out[2] = NULL;
    }
}

static void startElement(void *ctx, const xmlChar *localname, const xmlChar *prefix, const xmlChar *URI,
                         int namespaceCount, const xmlChar **namespaces, int attributeCount, int defaulted,
                         const xmlChar **attributes) {
    (void)defaulted;
    Parse *parse = ctx;
    int report = (parse->flags & 2) != 0, process = (parse->flags & 1) != 0;
    if (report) {
        // Each prefix declared here (default namespace: ""), before the element, as XMLParser does.
        if (!grow((void **)&parse->marks, &parse->markCapacity, parse->markCount, sizeof *parse->marks)) {
            outOfMemory(parse);
            return;
        }
        parse->marks[parse->markCount++] = parse->prefixCount;
        for (int i = 0; i < namespaceCount; i++) {
            const char *name = namespaces[2 * i] != NULL ? (const char *)namespaces[2 * i] : "";
            const char *uri = namespaces[2 * i + 1] != NULL ? (const char *)namespaces[2 * i + 1] : "";
            char *copy = strdup(name);
            if (copy == NULL || !grow((void **)&parse->prefixes, &parse->prefixCapacity, parse->prefixCount,
                                      sizeof *parse->prefixes)) {
                free(copy);
                outOfMemory(parse);
                return;
            }
            parse->prefixes[parse->prefixCount++] = copy;
            const char *strings[2] = {name, uri};
            intptr_t lengths[2] = {(intptr_t)strlen(name), (intptr_t)strlen(uri)};
            send(parse, START_MAPPING_PREFIX, strings, lengths, 2, 0);
        }
    }
    // name, URI, qualified name, then key/value pairs: the namespace declarations as attributes
    // (without namespace processing), then the attributes; a later pair with the same key wins.
    size_t count = 3 + 2 * ((size_t)(process ? 0 : namespaceCount) + (size_t)attributeCount);
    const char **strings = calloc(count, sizeof *strings);
    intptr_t *lengths = calloc(count, sizeof *lengths);
    char **owned = calloc(count + 1, sizeof *owned);
    if (strings == NULL || lengths == NULL || owned == NULL) {
        free(strings);
        free(lengths);
        free(owned);
        outOfMemory(parse);
        return;
    }
    size_t n = 3, ownedCount = 1;
    names(parse, localname, prefix, URI, strings, &owned[0]);
    for (size_t i = 0; i < 3; i++) lengths[i] = strings[i] != NULL ? (intptr_t)strlen(strings[i]) : 0;
    for (int i = 0; !process && i < namespaceCount; i++) {
        const xmlChar *name = namespaces[2 * i];
        char *key = name != NULL ? joined((const xmlChar *)"xmlns", ":", name) : strdup("xmlns");
        if (key == NULL) continue;
        owned[ownedCount++] = key;
        const char *uri = namespaces[2 * i + 1] != NULL ? (const char *)namespaces[2 * i + 1] : "";
        strings[n] = key;
        lengths[n++] = (intptr_t)strlen(key);
        strings[n] = uri;
        lengths[n++] = (intptr_t)strlen(uri);
    }
    for (int i = 0; i < attributeCount; i++) {
        const xmlChar *const *attribute = attributes + 5 * i;  // local name, prefix, URI, value, end
        if (attribute[0] == NULL || attribute[3] == NULL || attribute[4] == NULL) continue;
        char *key = attribute[1] != NULL && attribute[1][0] != 0 ? joined(attribute[1], ":", attribute[0]) : NULL;
        if (key != NULL) owned[ownedCount++] = key;
        strings[n] = key != NULL ? key : (const char *)attribute[0];
        lengths[n] = (intptr_t)strlen(strings[n]);
        n++;
        strings[n] = (const char *)attribute[3];
        lengths[n++] = attribute[4] > attribute[3] ? attribute[4] - attribute[3] : 0;
    }
    send(parse, START_ELEMENT, strings, lengths, (int32_t)n, 0);
    for (size_t i = 0; i < ownedCount; i++) free(owned[i]);
    free(owned);
    free(strings);
    free(lengths);
}

static void endElement(void *ctx, const xmlChar *localname, const xmlChar *prefix, const xmlChar *URI) {
    Parse *parse = ctx;
    const char *strings[3];
    intptr_t lengths[3];
    char *owned;
    names(parse, localname, prefix, URI, strings, &owned);
    for (int i = 0; i < 3; i++) lengths[i] = strings[i] != NULL ? (intptr_t)strlen(strings[i]) : 0;
    send(parse, END_ELEMENT, strings, lengths, 3, 0);
    free(owned);
    // The prefixes its start declared go out of scope after it.
    if ((parse->flags & 2) && parse->markCount > 0) {
        size_t mark = parse->marks[--parse->markCount];
        for (size_t i = mark; i < parse->prefixCount; i++) {
            sendString(parse, END_MAPPING_PREFIX, (const xmlChar *)parse->prefixes[i]);
            free(parse->prefixes[i]);
        }
        parse->prefixCount = mark;
    }
}

// MARK: Content

static void characters(void *ctx, const xmlChar *text, int length) {
    Parse *parse = ctx;
    if (parse->skipCharacters) {
        parse->skipCharacters = 0;
        return;
    }
    const char *strings[1] = {(const char *)text};
    intptr_t lengths[1] = {length};
    send(parse, CHARACTERS, strings, lengths, 1, 0);
}

static void processingInstruction(void *ctx, const xmlChar *target, const xmlChar *data) {
    const char *strings[2] = {(const char *)target, (const char *)data};
    intptr_t lengths[2] = {(intptr_t)strlen((const char *)target),
                           data != NULL ? (intptr_t)strlen((const char *)data) : 0};
    send(ctx, PROCESSING_INSTRUCTION, strings, lengths, 2, 0);
}

static void comment(void *ctx, const xmlChar *value) { sendString(ctx, COMMENT, value); }

static void cdataBlock(void *ctx, const xmlChar *value, int length) {
    const char *strings[1] = {(const char *)value};
    intptr_t lengths[1] = {length};
    send(ctx, CDATA, strings, lengths, 1, 0);
}

// MARK: DTD and entities (what FoundationXML's handler does with them)

static void internalSubset(void *ctx, const xmlChar *name, const xmlChar *externalID, const xmlChar *systemID) {
    Parse *parse = ctx;
    if (parse->parser != NULL) xmlSAX2InternalSubset(parse->parser, name, externalID, systemID);
}

static void externalSubset(void *ctx, const xmlChar *name, const xmlChar *externalID, const xmlChar *systemID) {
    Parse *parse = ctx;
    if (parse->parser != NULL) xmlSAX2ExternalSubset(parse->parser, name, externalID, systemID);
}

static int isStandalone(void *ctx) {
    Parse *parse = ctx;
    return parse->parser != NULL && parse->parser->myDoc != NULL ? parse->parser->myDoc->standalone : 0;
}

static int hasInternalSubset(void *ctx) {
    Parse *parse = ctx;
    return parse->parser != NULL && parse->parser->myDoc != NULL && parse->parser->myDoc->intSubset != NULL;
}

static int hasExternalSubset(void *ctx) {
    Parse *parse = ctx;
    return parse->parser != NULL && parse->parser->myDoc != NULL && parse->parser->myDoc->extSubset != NULL;
}

static xmlEntityPtr getEntity(void *ctx, const xmlChar *name) {
    Parse *parse = ctx;
    xmlEntityPtr entity = xmlGetPredefinedEntity(name);
    if (entity == NULL && parse->parser != NULL) {
        entity = xmlSAX2GetEntity(parse->parser, name);
        if (entity != NULL && parse->parser->instate == XML_PARSER_CONTENT) parse->skipCharacters = 1;
    }
    return entity;
}

static void unparsedEntityDecl(void *ctx, const xmlChar *name, const xmlChar *publicID, const xmlChar *systemID,
                               const xmlChar *notationName) {
    Parse *parse = ctx;
    if (parse->parser != NULL) xmlSAX2UnparsedEntityDecl(parse->parser, name, publicID, systemID, notationName);
}

// Declarations XMLParser hands to delegate methods bk.XMLParser does not forward.
static void notationDecl(void *ctx, const xmlChar *name, const xmlChar *publicID, const xmlChar *systemID) {
    (void)ctx, (void)name, (void)publicID, (void)systemID;
}

static void attributeDecl(void *ctx, const xmlChar *element, const xmlChar *name, int type, int def,
                          const xmlChar *defaultValue, xmlEnumerationPtr tree) {
    (void)ctx, (void)element, (void)name, (void)type, (void)def, (void)defaultValue;
    xmlFreeEnumeration(tree);  // the handler owns it
}

static void elementDecl(void *ctx, const xmlChar *name, int type, xmlElementContentPtr content) {
    (void)ctx, (void)name, (void)type, (void)content;
}

static void ignoreError(void *ctx, const char *message, ...) { (void)ctx, (void)message; }

// MARK: Errors and the parse

/// Every error and warning of the parse (XMLParser's structured error function): the delegate's
/// parseErrorOccurred, and the parser's error.
static void structuredError(void *ctx, xmlErrorPtr error) {
    Parse *parse = ctx;
    if (error == NULL) return;
    parse->errorCode = error->code;
    send(parse, PARSE_ERROR, NULL, NULL, 0, error->code);
}

static pthread_once_t initialized = PTHREAD_ONCE_INIT;
static void initialize(void) { xmlInitParser(); }

int32_t bk_xml_parse(const uint8_t *bytes, intptr_t length, int32_t flags, void *context,
                     bk_xml_event_callback callback) {
    pthread_once(&initialized, initialize);
    Parse parse = {.flags = flags, .context = context, .callback = callback};
    int parsed = 1;
    // Fewer than 4 bytes: XMLParser waits for more (the encoding's sniff) and reports nothing.
    if (bytes != NULL && length >= 4) {
        xmlSAXHandler handler;
        memset(&handler, 0, sizeof handler);
        handler.internalSubset = internalSubset;
        handler.isStandalone = isStandalone;
        handler.hasInternalSubset = hasInternalSubset;
        handler.hasExternalSubset = hasExternalSubset;
        handler.getEntity = getEntity;
        handler.notationDecl = notationDecl;
        handler.attributeDecl = attributeDecl;
        handler.elementDecl = elementDecl;
        handler.unparsedEntityDecl = unparsedEntityDecl;
        handler.startDocument = startDocument;
        handler.endDocument = endDocument;
        handler.startElementNs = startElement;
        handler.endElementNs = endElement;
        handler.characters = characters;
        handler.processingInstruction = processingInstruction;
        handler.error = ignoreError;
        handler.cdataBlock = cdataBlock;
        handler.comment = comment;
        handler.externalSubset = externalSubset;
        handler.initialized = XML_SAX2_MAGIC;
        // The thread's error function for this parse (a parse inside a delegate method restores
        // the outer one's).
        xmlStructuredErrorFunc outerFunction = xmlStructuredError;
        void *outerContext = xmlStructuredErrorContext;
        xmlSetStructuredErrorFunc(&parse, structuredError);
        parse.parser = xmlCreatePushParserCtxt(&handler, &parse, (const char *)bytes, 4, NULL);
        if (parse.parser == NULL) {
            if (parse.errorCode == 0) parse.errorCode = OUT_OF_MEMORY;
            parsed = 0;
        } else {
            // Entities substituted, recovering from errors; no DTD loaded, nothing from the network.
            xmlCtxtUseOptions(parse.parser, XML_PARSE_RECOVER | XML_PARSE_NOENT);
            int result = xmlParseChunk(parse.parser, (const char *)bytes + 4, (int)(length - 4), 1);
            if (result == XML_ERR_DOCUMENT_END) result = XML_ERR_OK;
            if (result != XML_ERR_OK) {
                parsed = 0;
                if (parse.errorCode == 0) parse.errorCode = result;
            }
        }
        xmlSetStructuredErrorFunc(outerContext, outerFunction);
    }
    send(&parse, RESULT, NULL, NULL, 0, parsed);
    if (parse.errorCode != 0) send(&parse, RESULT_ERROR, NULL, NULL, 0, parse.errorCode);
    if (parse.parser != NULL) {
        if (parse.parser->myDoc != NULL) xmlFreeDoc(parse.parser->myDoc);
        xmlFreeParserCtxt(parse.parser);
    }
    for (size_t i = 0; i < parse.prefixCount; i++) free(parse.prefixes[i]);
    free(parse.prefixes);
    free(parse.marks);
    return 0;
}
