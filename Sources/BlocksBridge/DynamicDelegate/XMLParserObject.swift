
/// `bk.XMLParser(xmlString)`: Foundation's `XMLParser` for Lua, the proof that Swift delegating
/// objects use the same dynamic delegates as Lua ones (libxml2 driven as FoundationXML drives it,
/// loaded at the first parse: libbkxml.so, see XMLParserPlugin), not when the module starts. `p.delegate` is the parser's dynamic
/// delegate for the `XMLParserDelegate` protocol (assigning sets its real delegate); `p:parse()`
/// drives it and returns true or false like Foundation (`p.parserError` says why).
final class XMLParserObject: LuaBridged {
    static let protocolName = "XMLParserDelegate"

    let data: [UInt8]
    var shouldProcessNamespaces = false
    var shouldReportNamespacePrefixes = false
    /// A parse is in progress (for `abortParsing`); the parse stops at its next event once asked.
    private(set) var running = false
    fileprivate(set) var abortRequested = false
    private(set) var parserError: String?
    /// The parser's position: where the event being handled is, then where the parse ended.
    var lineNumber = 0
    var columnNumber = 0

    init(data: [UInt8]) { self.data = data }

    /// The methods of `XMLParserDelegate`, as Lua method names.
    static let methodNames = [
        "parserDidStartDocument", "parserDidEndDocument",
        "parserDidStartElement", "parserDidEndElement",
        "parserDidStartMappingPrefix", "parserDidEndMappingPrefix",
        "parserFoundCharacters", "parserFoundIgnorableWhitespace",
        "parserFoundProcessingInstructionWithTarget", "parserFoundComment", "parserFoundCDATA",
        "parserParseErrorOccurred", "parserValidationErrorOccurred",
    ]

    // Both made on first use, not at start-up: the protocol when its name is first looked up
    // (DynamicDelegateStore.registeredProtocol), the class's when the first parser is made.

    /// Registers the protocol (a script may replace it, as any protocol) and returns it.
    static func registerProtocol(_ stack: LuaStack) -> DelegateProtocol {
        let methods = Dictionary(uniqueKeysWithValues: methodNames.map {
            ($0, DelegateProtocol.Method(required: false, combine: nil, defaultValue: nil))
        })
        let proto = DelegateProtocol(name: protocolName, methods: methods)
        proto.register(in: stack)
        return proto
    }

    /// Pushes a new parser; the first one of the state makes the protocol the `delegate` protocol
    /// of the class (with its metatable).
    static func push(_ parser: XMLParserObject, on stack: LuaStack) {
        if stack.rawGet(LuaStack.registryIndex, field: luaClass.name) != .table {
            LuaClass.registerDelegateProtocol(protocolName, for: luaClass, in: stack)
        }
        stack.pop()
        stack.push(object: parser)
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
        guard !object.running else { throw .message("parse already in progress") }
        let parse: XMLParserPlugin.Parse
        switch XMLParserPlugin.parse(in: stack) {
        case .success(let function): parse = function
        case .failure(let error): throw .message(error.text)
        }
        let forwarder = try DelegateForwarder(stack: stack, object: 1, protocol: try delegateProtocol(stack))
        let delegate = XMLParserForwarder(forwarder, object: object)
        forwarder.onError = { [weak object] in object?.abortRequested = true }
        object.running = true
        object.abortRequested = false
        object.parserError = nil
        let flags: Int32 = (object.shouldProcessNamespaces ? 1 : 0) | (object.shouldReportNamespacePrefixes ? 2 : 0)
        withExtendedLifetime(delegate) {
            _ = object.data.withUnsafeBufferPointer { bytes in
                parse(bytes.baseAddress, bytes.count, flags, Unmanaged.passUnretained(delegate).toOpaque(),
                      XMLParserPlugin.callback)
            }
        }
        let parsed = delegate.parsed
        if parsed { delegate.reportIncompleteDocument(empty: object.data.isEmpty) }
        object.running = false
        object.abortRequested = false
        // False whenever Foundation reported an error, as Apple's Foundation answers.
        let succeeded = parsed && delegate.reportedError == nil
        if !succeeded {
            object.parserError = delegate.reportedError
                ?? (delegate.resultErrorCode != 0 ? delegate.describe(code: delegate.resultErrorCode) : "parse failed")
        }
        try forwarder.raisePendingError()
        stack.push(succeeded)
        return 1
    }

    static let luaClass = LuaClass(
        name: "bk.XMLParser",
        methods: [
            BKFunction("parse", parse),
            BKFunction("abortParsing") { stack throws(LuaRaise) in
                let object = try stack.checkObject(XMLParserObject.self, at: 1)
                if object.running { object.abortRequested = true }
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
            .readOnly("lineNumber") { (p: XMLParserObject, stack) in stack.push(p.lineNumber) },
            .readOnly("columnNumber") { (p: XMLParserObject, stack) in stack.push(p.columnNumber) },
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
    func stringBytes(_ index: Int32) -> [UInt8]? {
        guard type(at: index) == .string else { return nil }
        return withBytes(at: index) { Array($0) }
    }
}
