import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

// libbkxml.so: Foundation's XMLParser behind a C entry point, loaded by the bridge (dlopen) the
// first time a script calls `p:parse()`, so that Foundation, ICU and libxml2 stay out of every
// start-up. It depends on nothing of the bridge: events cross as C strings (see
// Sources/BlocksBridge/DynamicDelegate/XMLParserPlugin.swift, the other side of this contract).

/// One event: `strings` (with `lengths`) are the delegate method's string arguments (nil: absent),
/// `code` an error code, `line`/`column` the parser's position. Returns nonzero to abort the parse.
public typealias BKXMLEventCallback = @convention(c) (
    _ context: UnsafeMutableRawPointer?, _ event: Int32,
    _ strings: UnsafePointer<UnsafePointer<CChar>?>?, _ lengths: UnsafePointer<Int>?, _ count: Int32,
    _ code: Int, _ line: Int, _ column: Int
) -> Int32

/// The events, in the order of XMLParserDelegate's methods; `result` comes last, once: code 1 when
/// `parse()` returned true, and the parser's own error (code in `code`, no strings) if it has one.
enum Event: Int32 {
    case startDocument = 1, endDocument, startElement, endElement, startMappingPrefix, endMappingPrefix
    case characters, ignorableWhitespace, processingInstruction, comment, cdata, parseError, validationError
    case result, resultError
}

final class Forwarder: NSObject, XMLParserDelegate {
    let context: UnsafeMutableRawPointer?
    let callback: BKXMLEventCallback

    init(context: UnsafeMutableRawPointer?, callback: @escaping BKXMLEventCallback) {
        self.context = context
        self.callback = callback
    }

    func send(_ parser: XMLParser?, _ event: Event, _ strings: [String?] = [], code: Int = 0,
              bytes: [UInt8]? = nil) {
        // Every string as NUL-terminated UTF-8 bytes with its length (CDATA may be any bytes).
        var buffers: [[CChar]?] = strings.map { $0.map { Array($0.utf8CString) } }
        var lengths: [Int] = strings.map { $0.map { $0.utf8.count } ?? 0 }
        if let bytes {
            buffers.append(bytes.map { CChar(bitPattern: $0) } + [0])
            lengths.append(bytes.count)
        }
        let line = parser?.lineNumber ?? 0, column = parser?.columnNumber ?? 0
        let pointers: [UnsafeMutablePointer<CChar>?] = buffers.map { buffer in
            buffer.map { bytes in
                let pointer = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count)
                pointer.initialize(from: bytes, count: bytes.count)
                return pointer
            }
        }
        defer { for pointer in pointers { pointer?.deallocate() } }
        let arguments = pointers.map { $0.map { UnsafePointer($0) } }
        let abort = arguments.withUnsafeBufferPointer { p in
            lengths.withUnsafeBufferPointer { l in
                callback(context, event.rawValue, p.baseAddress, l.baseAddress, Int32(p.count), code, line, column)
            }
        }
        if abort != 0 { parser?.abortParsing() }
    }

    func parserDidStartDocument(_ parser: XMLParser) { send(parser, .startDocument) }
    func parserDidEndDocument(_ parser: XMLParser) { send(parser, .endDocument) }

    func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]) {
        var strings: [String?] = [elementName, namespaceURI, qName]
        for (key, value) in attributeDict { strings.append(key); strings.append(value) }
        send(parser, .startElement, strings)
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?,
                qualifiedName qName: String?) {
        send(parser, .endElement, [elementName, namespaceURI, qName])
    }

    func parser(_ parser: XMLParser, didStartMappingPrefix prefix: String, toURI namespaceURI: String) {
        send(parser, .startMappingPrefix, [prefix, namespaceURI])
    }

    func parser(_ parser: XMLParser, didEndMappingPrefix prefix: String) {
        send(parser, .endMappingPrefix, [prefix])
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) { send(parser, .characters, [string]) }

    func parser(_ parser: XMLParser, foundIgnorableWhitespace whitespaceString: String) {
        send(parser, .ignorableWhitespace, [whitespaceString])
    }

    func parser(_ parser: XMLParser, foundProcessingInstructionWithTarget target: String, data: String?) {
        send(parser, .processingInstruction, [target, data])
    }

    func parser(_ parser: XMLParser, foundComment comment: String) { send(parser, .comment, [comment]) }

    func parser(_ parser: XMLParser, foundCDATA CDATABlock: Data) {
        send(parser, .cdata, bytes: [UInt8](CDATABlock))
    }

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: Error) {
        send(parser, .parseError, code: (parseError as NSError).code)
    }

    func parser(_ parser: XMLParser, validationErrorOccurred validationError: Error) {
        send(parser, .validationError, code: (validationError as NSError).code)
    }
}

/// Parses `length` bytes at `bytes` (flags: 1 process namespaces, 2 report namespace prefixes),
/// calling `callback` for each delegate method, then once with `result`. Returns 0.
@_cdecl("bk_xml_parse")
public func bk_xml_parse(_ bytes: UnsafePointer<UInt8>?, _ length: Int, _ flags: Int32,
                         _ context: UnsafeMutableRawPointer?, _ callback: BKXMLEventCallback) -> Int32 {
    let data = bytes.map { Data(bytes: $0, count: length) } ?? Data()
    let parser = XMLParser(data: data)
    parser.shouldProcessNamespaces = flags & 1 != 0
    parser.shouldReportNamespacePrefixes = flags & 2 != 0
    let forwarder = Forwarder(context: context, callback: callback)
    parser.delegate = forwarder
    let parsed = parser.parse()
    parser.delegate = nil
    forwarder.send(parser, .result, code: parsed ? 1 : 0)
    if let error = parser.parserError { forwarder.send(parser, .resultError, code: (error as NSError).code) }
    return 0
}
