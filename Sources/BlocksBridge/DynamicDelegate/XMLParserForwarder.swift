/// The parse's events, as libbkxml.so reports them (see XMLParserPlugin.swift): every
/// `XMLParserDelegate` callback becomes a call of the Lua dynamic delegate's method of the same name
/// (first two selector parts), with the parser's userdata first.
final class XMLParserForwarder {
    private let forwarder: DelegateForwarder
    let object: XMLParserObject
    /// The first error Foundation reported through `parseErrorOccurred` (corelibs Foundation can
    /// report an error at the end of the document and still return true from `parse()`).
    private(set) var reportedError: String?
    /// Names of the elements started and not yet ended.
    private var openElements: [String] = []
    /// Whether any element started (corelibs Foundation reports nothing at all for a document too
    /// short to sniff its encoding, such as `""` or `<a>`).
    private var sawElement = false
    /// What `parse()` returned, and the parser's own error code (0: none), once the parse ended.
    private(set) var parsed = false
    private(set) var resultErrorCode = 0

    init(_ forwarder: DelegateForwarder, object: XMLParserObject) {
        self.forwarder = forwarder
        self.object = object
    }

    private func call(_ method: String, _ strings: [String?]) {
        forwarder.call(method, arguments: { stack in
            for string in strings {
                if let string { stack.push(string) } else { stack.pushNil() }
            }
            return Int32(strings.count)
        })
    }

    /// One event from the plugin (`strings`: its string arguments, nil where absent).
    func handle(_ event: XMLParserPlugin.Event, _ strings: [String?], bytes: [UInt8]?, code: Int) {
        switch event {
        case .startDocument: call("parserDidStartDocument", [])
        case .endDocument: call("parserDidEndDocument", [])
        case .startElement:
            let elementName = strings.first.flatMap { $0 } ?? ""
            openElements.append(elementName)
            sawElement = true
            forwarder.call("parserDidStartElement", arguments: { stack in
                for i in 0 ..< 3 {
                    if i < strings.count, let string = strings[i] { stack.push(string) } else { stack.pushNil() }
                }
                let pairs = max(0, strings.count - 3) / 2
                stack.pushNewTable(recordCount: Int32(pairs))
                for i in 0 ..< pairs {
                    guard let key = strings[3 + 2 * i], let value = strings[4 + 2 * i] else { continue }
                    stack.push(value)
                    stack.rawSet(-2, field: key)
                }
                return 4
            })
        case .endElement:
            _ = openElements.popLast()
            call("parserDidEndElement", Array(strings.prefix(3)))
        case .startMappingPrefix: call("parserDidStartMappingPrefix", Array(strings.prefix(2)))
        case .endMappingPrefix: call("parserDidEndMappingPrefix", Array(strings.prefix(1)))
        case .characters: call("parserFoundCharacters", Array(strings.prefix(1)))
        case .ignorableWhitespace: call("parserFoundIgnorableWhitespace", Array(strings.prefix(1)))
        case .processingInstruction: call("parserFoundProcessingInstructionWithTarget", Array(strings.prefix(2)))
        case .comment: call("parserFoundComment", Array(strings.prefix(1)))
        case .cdata:
            forwarder.call("parserFoundCDATA", arguments: { stack in
                (bytes ?? []).withUnsafeBytes { stack.push(bytes: $0) }
                return 1
            })
        case .parseError:
            let message = describe(code: code)
            if reportedError == nil { reportedError = message }
            callWithError("parserParseErrorOccurred", message, code)
        case .validationError:
            callWithError("parserValidationErrorOccurred", describe(code: code), code)
        case .result: parsed = code == 1
        case .resultError: resultErrorCode = code
        }
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
    func reportIncompleteDocument(empty: Bool) {
        guard reportedError == nil, !forwarder.failed else { return }
        let code: Int, detail: String
        if let open = openElements.last {
            (code, detail) = (Self.tagNotFinished, ": '\(open)' is not closed")
        } else if !sawElement {
            (code, detail) = empty ? (Self.emptyDocument, "") : (Self.tagNotFinished, ": no complete root element")
        } else {
            return
        }
        let message = describe(code: code) + detail
        reportedError = message
        callWithError("parserParseErrorOccurred", message, code)
    }

    static let emptyDocument = 4
    static let tagNotFinished = 77

    /// `tag name mismatch (76) at line 1, column 10` rather than NSError's description. The codes
    /// are libxml2's, which Apple's `XMLParser.ErrorCode` numbers follow (corelibs' enum does not).
    func describe(code: Int) -> String {
        let name = Self.errorNames[code] ?? "XML error"
        return "\(name) (\(code)) at line \(object.lineNumber), column \(object.columnNumber)"
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
