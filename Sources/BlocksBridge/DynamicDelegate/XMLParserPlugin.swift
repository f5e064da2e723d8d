import CLuaShim

/// The bridge's side of libbkxml.so (Sources/XMLModule: libxml2's SAX2 driven as FoundationXML drives
/// it, in C; Foundation's own XMLParser crashes on Linux on `<?pi?>` and on a NOTATION without a
/// public id): the parser lives in a library of its own, loaded the first time a parser parses, so
/// libxml2 is not loaded when bklua or bk.so start. The contract is C
/// (Sources/XMLModule/include/BKXMLModule.h): `bk_xml_parse` calls back with events whose arguments
/// are C strings.
enum XMLParserPlugin {
    /// Must match Sources/XMLModule/SAXParse.c.
    enum Event: Int32 {
        case startDocument = 1, endDocument, startElement, endElement, startMappingPrefix, endMappingPrefix
        case characters, ignorableWhitespace, processingInstruction, comment, cdata, parseError, validationError
        case result, resultError
    }

    typealias Callback = @convention(c) (
        UnsafeMutableRawPointer?, Int32, UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int>?, Int32,
        Int, Int, Int
    ) -> Int32
    typealias Parse = @convention(c) (UnsafePointer<UInt8>?, Int, Int32, UnsafeMutableRawPointer?, Callback) -> Int32

    static let library = "libbkxml.so"
    /// The rock's module (blocksbridge-xml): the same entry over libxml2 directly, `bk/xml.so` where
    /// `require "bk.xml"` would find it.
    static let module = "bk.xml"

    /// `bk_xml_parse` from libbkxml.so, loaded once (first use); the error says where it was looked for.
    static let linked: Result<Parse, LuaError.Message> = {
        var error = [CChar](repeating: 0, count: 512)
        guard let symbol = bk_plugin_symbol(library, "bk_xml_parse", &error, error.count) else {
            return .failure(LuaError.Message(text: text(error)))
        }
        return .success(unsafeBitCast(symbol, to: Parse.self))
    }()

    /// `bk_xml_parse`: libbkxml.so's (bklua, hosts, scripts/build-module), else the `bk.xml`
    /// module's on the state's `package.cpath` (the rock route: bk.so alone, bk/xml.so beside it
    /// or in another tree). dlopen finds a library it already loaded at once.
    static func parse(in stack: LuaStack) -> Result<Parse, LuaError.Message> {
        let reason: String
        switch linked {
        case .success: return linked
        case .failure(let error): reason = error.text
        }
        var error = [CChar](repeating: 0, count: 512)
        var failures: [String] = []
        for path in modulePaths(stack) {
            if let symbol = bk_plugin_symbol_at(path, "bk_xml_parse", &error, error.count) {
                return .success(unsafeBitCast(symbol, to: Parse.self))
            }
            if error[0] != 0 { failures.append(text(error)) }
        }
        let module = failures.isEmpty
            ? "no \(Self.module) module on package.cpath" : failures.joined(separator: "; ")
        return .failure(LuaError.Message(
            text: "bk.XMLParser needs the bkxml product: \(reason), and \(module) (the blocksbridge-xml rock)"))
    }

    /// Where `require "bk.xml"` looks: each template of `package.cpath` (read raw) with `bk/xml`.
    private static func modulePaths(_ stack: LuaStack) -> [String] {
        let top = stack.top
        defer { stack.pop(stack.top - top) }
        stack.pushGlobalTable()
        guard stack.rawGet(-1, field: "package") == .table, stack.rawGet(-1, field: "cpath") == .string,
              let cpath = stack.toString(-1) else { return [] }
        let name = module.split(separator: ".").joined(separator: "/")
        return cpath.split(separator: ";").map { template in
            template.split(separator: "?", omittingEmptySubsequences: false).joined(separator: name)
        }
    }

    private static func text(_ error: [CChar]) -> String {
        String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The events' entry: `context` is the parse's XMLParserForwarder.
    static let callback: Callback = { context, event, strings, lengths, count, code, line, column in
        guard let context, let event = Event(rawValue: event) else { return 1 }
        let handler = Unmanaged<XMLParserForwarder>.fromOpaque(context).takeUnretainedValue()
        handler.object.lineNumber = line
        handler.object.columnNumber = column
        var texts: [String?] = []
        var bytes: [UInt8]?
        if let strings, let lengths {
            for i in 0 ..< Int(max(0, count)) {
                guard let pointer = strings[i] else { texts.append(nil); continue }
                let buffer = UnsafeRawBufferPointer(start: pointer, count: lengths[i])
                if event == .cdata { bytes = Array(buffer) } else { texts.append(String(decoding: buffer, as: UTF8.self)) }
            }
        }
        handler.handle(event, texts, bytes: bytes, code: code)
        return handler.object.abortRequested ? 1 : 0
    }
}

extension LuaError {
    /// A message that can live in a static (Result needs an Error type).
    struct Message: Error, Sendable { let text: String }
}
