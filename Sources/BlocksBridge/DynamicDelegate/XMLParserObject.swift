import CLua
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// `bk.XMLParser(xmlString)`: Foundation's `XMLParser` for Lua, the proof that Swift delegating
/// objects use the same dynamic delegates as Lua ones. `p.delegate` is the parser's dynamic
/// delegate for the `XMLParserDelegate` protocol (assigning sets its real delegate); `p:parse()`
/// drives it and returns true or false like Foundation (`p.parserError` says why).
final class XMLParserObject: LuaBridged {
    static let protocolName = "XMLParserDelegate"

    let data: Data
    var shouldProcessNamespaces = false
    var shouldReportNamespacePrefixes = false
    /// The parser of the parse in progress (for `abortParsing`, line and column).
    private(set) var running: XMLParser?
    private(set) var parserError: String?
    private(set) var lineNumber = 0
    private(set) var columnNumber = 0

    init(data: Data) { self.data = data }

    /// The methods of `XMLParserDelegate`, as Lua method names.
    static let methodNames = [
        "parserDidStartDocument", "parserDidEndDocument",
        "parserDidStartElement", "parserDidEndElement",
        "parserDidStartMappingPrefix", "parserDidEndMappingPrefix",
        "parserFoundCharacters", "parserFoundIgnorableWhitespace",
        "parserFoundProcessingInstructionWithTarget", "parserFoundComment", "parserFoundCDATA",
        "parserParseErrorOccurred", "parserValidationErrorOccurred",
    ]

    /// Registers the protocol and makes it the `delegate` protocol of parsers.
    static func setUp(_ stack: LuaStack) {
        let methods = Dictionary(uniqueKeysWithValues: methodNames.map {
            ($0, DelegateProtocol.Method(required: false, combine: nil, defaultValue: nil))
        })
        DelegateProtocol(name: protocolName, methods: methods).register(in: stack)
        LuaClass.registerDelegateProtocol(protocolName, for: luaClass, in: stack)
    }

    static func delegateProtocol(_ stack: LuaStack) throws(LuaRaise) -> DelegateProtocol {
        guard let proto = DynamicDelegateStore.registeredProtocol(named: protocolName, in: stack) else {
            throw .message("protocol '\(protocolName)' is not registered")
        }
        return proto
    }

    // p:parse(): true when the document parsed. An error raised by a delegate method aborts the
    // parse and is raised here, after Foundation has returned.
    static func parse(_ stack: LuaStack) throws(LuaRaise) -> Int32 {
        let object = try stack.checkObject(XMLParserObject.self, at: 1)
        guard object.running == nil else { throw .message("parse already in progress") }
        let forwarder = try DelegateForwarder(stack: stack, object: 1, protocol: try delegateProtocol(stack))
        let parser = XMLParser(data: object.data)
        parser.shouldProcessNamespaces = object.shouldProcessNamespaces
        parser.shouldReportNamespacePrefixes = object.shouldReportNamespacePrefixes
        let delegate = XMLParserForwarder(forwarder)
        forwarder.onError = { [weak parser] in parser?.abortParsing() }
        parser.delegate = delegate
        object.running = parser
        object.parserError = nil
        let parsed = parser.parse()
        if parsed { delegate.reportIncompleteDocument(parser, empty: object.data.isEmpty) }
        object.running = nil
        object.lineNumber = parser.lineNumber
        object.columnNumber = parser.columnNumber
        // False whenever Foundation reported an error, as Apple's Foundation answers.
        let succeeded = parsed && delegate.reportedError == nil
        if !succeeded {
            object.parserError = delegate.reportedError
                ?? parser.parserError.map { XMLParserForwarder.describe(code: ($0 as NSError).code, parser) } ?? "parse failed"
        }
        parser.delegate = nil
        try forwarder.raisePendingError()
        stack.push(succeeded)
        return 1
    }

    static let luaClass = LuaClass(
        name: "bk.XMLParser",
        methods: [
            BKFunction("parse", parse),
            BKFunction("abortParsing") { stack throws(LuaRaise) in
                try stack.checkObject(XMLParserObject.self, at: 1).running?.abortParsing()
                return 0
            },
        ],
        properties: [
            .dynamicDelegate(protocol: protocolName),
            .readWrite("shouldProcessNamespaces", get: { (p: XMLParserObject, stack) in
                stack.push(p.shouldProcessNamespaces)
            }, set: { (p: XMLParserObject, stack, value) in
                p.shouldProcessNamespaces = stack.toBool(value)
            }),
            .readWrite("shouldReportNamespacePrefixes", get: { (p: XMLParserObject, stack) in
                stack.push(p.shouldReportNamespacePrefixes)
            }, set: { (p: XMLParserObject, stack, value) in
                p.shouldReportNamespacePrefixes = stack.toBool(value)
            }),
            .readOnly("parserError") { (p: XMLParserObject, stack) in
                if let error = p.parserError { stack.push(error) } else { stack.pushNil() }
            },
            .readOnly("lineNumber") { (p: XMLParserObject, stack) in
                stack.push(p.running?.lineNumber ?? p.lineNumber)
            },
            .readOnly("columnNumber") { (p: XMLParserObject, stack) in
                stack.push(p.running?.columnNumber ?? p.columnNumber)
            },
        ],
        metamethods: [
            BKFunction("__tostring") { stack throws(LuaRaise) in
                _ = try stack.checkObject(XMLParserObject.self, at: 1)
                stack.push("bk.XMLParser: 0x" + String(UInt(bitPattern: stack.toPointer(1)), radix: 16))
                return 1
            },
        ])
}

extension LuaStack {
    /// The bytes of the string at `index` (no UTF-8 repair: XML may declare another encoding).
    func stringData(_ index: Int32) -> Data? {
        guard type(at: index) == .string else { return nil }
        var length = 0
        guard let chars = lua_tolstring(L, index, &length) else { return nil }
        return Data(bytes: chars, count: length)
    }
}
