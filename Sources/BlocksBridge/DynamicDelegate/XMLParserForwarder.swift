import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// The `XMLParserDelegate` Foundation talks to: every callback becomes a call of the Lua dynamic
/// delegate's method of the same name (first two selector parts), with the parser's userdata first.
final class XMLParserForwarder: NSObject, XMLParserDelegate {
    private let forwarder: DelegateForwarder
    /// The first error Foundation reported through `parseErrorOccurred` (corelibs Foundation can
    /// report an error at the end of the document and still return true from `parse()`).
    private(set) var reportedError: String?
    /// Names of the elements started and not yet ended.
    private var openElements: [String] = []
    /// Whether any element started (corelibs Foundation reports nothing at all for a document too
    /// short to sniff its encoding, such as `""` or `<a>`).
    private var sawElement = false

    init(_ forwarder: DelegateForwarder) { self.forwarder = forwarder }

    private func call(_ method: String, _ strings: String?...) {
        forwarder.call(method, arguments: { stack in
            for string in strings {
                if let string { stack.push(string) } else { stack.pushNil() }
            }
            return Int32(strings.count)
        })
    }

    // MARK: XMLParserDelegate

    func parserDidStartDocument(_ parser: XMLParser) { call("parserDidStartDocument") }
    func parserDidEndDocument(_ parser: XMLParser) { call("parserDidEndDocument") }

    func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]) {
        openElements.append(elementName)
        sawElement = true
        forwarder.call("parserDidStartElement", arguments: { stack in
            stack.push(elementName)
            if let namespaceURI { stack.push(namespaceURI) } else { stack.pushNil() }
            if let qName { stack.push(qName) } else { stack.pushNil() }
            stack.pushNewTable(recordCount: Int32(attributeDict.count))
            for (key, value) in attributeDict {
                stack.push(value)
                stack.rawSet(-2, field: key)
            }
            return 4
        })
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?,
                qualifiedName qName: String?) {
        _ = openElements.popLast()
        call("parserDidEndElement", elementName, namespaceURI, qName)
    }

    func parser(_ parser: XMLParser, didStartMappingPrefix prefix: String, toURI namespaceURI: String) {
        call("parserDidStartMappingPrefix", prefix, namespaceURI)
    }

    func parser(_ parser: XMLParser, didEndMappingPrefix prefix: String) {
        call("parserDidEndMappingPrefix", prefix)
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        call("parserFoundCharacters", string)
    }

    func parser(_ parser: XMLParser, foundIgnorableWhitespace whitespaceString: String) {
        call("parserFoundIgnorableWhitespace", whitespaceString)
    }

    func parser(_ parser: XMLParser, foundProcessingInstructionWithTarget target: String, data: String?) {
        call("parserFoundProcessingInstructionWithTarget", target, data)
    }

    func parser(_ parser: XMLParser, foundComment comment: String) {
        call("parserFoundComment", comment)
    }

    func parser(_ parser: XMLParser, foundCDATA CDATABlock: Data) {
        forwarder.call("parserFoundCDATA", arguments: { stack in
            CDATABlock.withUnsafeBytes { stack.push(bytes: $0) }
            return 1
        })
    }

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: Error) {
        let code = (parseError as NSError).code
        let message = Self.describe(code: code, parser)
        if reportedError == nil { reportedError = message }
        callWithError("parserParseErrorOccurred", message, code)
    }

    func parser(_ parser: XMLParser, validationErrorOccurred validationError: Error) {
        let code = (validationError as NSError).code
        callWithError("parserValidationErrorOccurred", Self.describe(code: code, parser), code)
    }

    private func callWithError(_ method: String, _ message: String, _ code: Int) {
        forwarder.call(method, arguments: { stack in
            stack.push(message)
            stack.push(code)
            return 2
        })
    }

    // MARK: Errors

    /// corelibs Foundation ends a document with unclosed elements, or without any, and no error;
    /// Apple's reports one. Reports it the same way (to the delegate too) once `parse()` returned.
    func reportIncompleteDocument(_ parser: XMLParser, empty: Bool) {
        guard reportedError == nil, !forwarder.failed else { return }
        let code: Int, detail: String
        if let open = openElements.last {
            (code, detail) = (Self.tagNotFinished, ": '\(open)' is not closed")
        } else if !sawElement {
            (code, detail) = empty ? (Self.emptyDocument, "") : (Self.tagNotFinished, ": no complete root element")
        } else {
            return
        }
        let message = Self.describe(code: code, parser) + detail
        reportedError = message
        callWithError("parserParseErrorOccurred", message, code)
    }

    static let emptyDocument = 4
    static let tagNotFinished = 77

    /// `tag name mismatch (76) at line 1, column 10` rather than NSError's description. The codes
    /// are libxml2's, which Apple's `XMLParser.ErrorCode` numbers follow (corelibs' enum does not).
    static func describe(code: Int, _ parser: XMLParser) -> String {
        let name = errorNames[code] ?? "XML error"
        return "\(name) (\(code)) at line \(parser.lineNumber), column \(parser.columnNumber)"
    }

    private static let errorNames: [Int: String] = [
        1: "internal error", 2: "out of memory", 3: "document start error", 4: "empty document",
        5: "extra content at the end of the document", 9: "invalid character",
        23: "entity reference not finished", 26: "undeclared entity", 38: "'<' in attribute value",
        39: "attribute not started", 40: "attribute not finished", 41: "attribute without value",
        42: "attribute redefined", 63: "CDATA not finished", 64: "reserved XML name",
        65: "space required", 68: "name required", 73: "'>' required", 76: "tag name mismatch",
        77: "tag not finished", 512: "delegate aborted parse",
    ]
}
