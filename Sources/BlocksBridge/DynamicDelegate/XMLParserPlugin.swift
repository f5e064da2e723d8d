import CLuaShim

/// The bridge's side of libbkxml.so (Sources/BlocksBridgeXML): Foundation's XMLParser lives in a
/// library of its own, loaded the first time a parser parses, so Foundation, ICU and libxml2 are
/// not loaded when bklua or bk.so start. The contract is C: `bk_xml_parse` calls back with events
/// whose arguments are C strings.
enum XMLParserPlugin {
    /// Must match Sources/BlocksBridgeXML/XMLParserPlugin.swift.
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

    /// `bk_xml_parse`, loaded once (first use); the error says where it was looked for.
    static let parse: Result<Parse, LuaError.Message> = {
        var error = [CChar](repeating: 0, count: 512)
        guard let symbol = bk_plugin_symbol(library, "bk_xml_parse", &error, error.count) else {
            let text = String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            return .failure(LuaError.Message(text: "bk.XMLParser needs the bkxml product: " + text))
        }
        return .success(unsafeBitCast(symbol, to: Parse.self))
    }()

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
