import BlocksBridge
import CEdit
import CLuaShim

/// Shows REPL results: strings quoted, tables expanded (keys sorted, nested tables indented up to
/// a depth limit, a table met again shown as a reference `<N>` to its first showing, so cycles
/// end), bk collections by kind (`bk.set{ 1, 2 }`), `bk.null` as `null`. A value whose metatable
/// has a `__tostring` (handles, timers, tasks, delegates, `bk.cancelled`) is shown by its `tostring`,
/// except the bk collections, which are expanded; a table with a metatable `__name` and no
/// `__tostring` is expanded with the name as prefix (`Point{ 1 }`).
///
/// Tables are read raw; only `__tostring` runs Lua code, in a protected call. A top-level value
/// whose `__tostring` fails makes `describe` throw, as `print` would; a nested one is shown as
/// `<error in __tostring: ...>`.
struct PrettyPrinter {
    let stack: LuaStack
    var maxDepth = 6
    var maxEntries = 200
    var width = 78
    /// ANSI colours by kind of value (terminal only).
    var colors = false

    /// What an atom is, for its colour.
    enum Style {
        case plain, string, number, constant, object

        var code: String? {
            switch self {
            case .plain: nil
            case .string: "32"    // green
            case .number: "36"    // cyan
            case .constant: "35"  // magenta: nil, booleans, null
            case .object: "33"    // yellow: functions, userdata, threads
            }
        }
    }

    indirect enum Node {
        case atom(String, Style)
        case table(pointer: UnsafeRawPointer, prefix: String, entries: [(key: String?, value: Node)], more: Bool)
        case reference(UnsafeRawPointer)
        case elided(prefix: String)
    }

    /// The values from `first` to the top, separated by tabs as `print` separates them. Throws the
    /// error of a top-level value's `__tostring` (as `tostring` raises it).
    func describe(from first: Int32) throws(LuaError) -> String {
        var builder = TreeBuilder(printer: self)
        let last = stack.top
        let nodes = (first ... max(first, last)).filter { $0 <= last }.map { builder.node(at: $0, depth: 0) }
        if let failure = builder.failure { throw failure }
        var renderer = Renderer(width: width, colors: colors, referenced: builder.referenced)
        return nodes.map { renderer.render($0, indent: 0) }.joined(separator: "\t")
    }

    // MARK: - Building the tree (reads Lua)

    struct TreeBuilder {
        let printer: PrettyPrinter
        var stack: LuaStack { printer.stack }
        /// Tables already shown (by identity); a second meeting becomes a reference.
        var shown = Set<UnsafeRawPointer>()
        var referenced = Set<UnsafeRawPointer>()
        /// The first error of a top-level value's `__tostring`.
        var failure: LuaError?

        /// The value's `tostring`; a failure at the top level is recorded (the caller reports it).
        private mutating func toStringAtom(_ index: Int32, depth: Int) -> Node {
            switch printer.toString(index) {
            case .success(let text): return .atom(text, .object)
            case .failure(let error):
                if depth == 0, failure == nil { failure = error }
                return .atom(PrettyPrinter.describeFailure(error), .object)
            }
        }

        mutating func node(at index: Int32, depth: Int) -> Node {
            let index = stack.absolute(index)
            switch stack.type(at: index) {
            case .nil, .none: return .atom("nil", .constant)
            case .boolean: return .atom(stack.toBool(index) ? "true" : "false", .constant)
            case .number:
                stack.pushCopy(of: index)
                defer { stack.pop() }
                return .atom(stack.toString(-1) ?? "?", .number)
            case .string:
                return .atom(printer.quotedString(at: index), .string)
            case .table:
                return table(at: index, depth: depth)
            default:
                if stack.isNull(index) { return .atom("null", .constant) }
                return toStringAtom(index, depth: depth)
            }
        }

        private mutating func table(at index: Int32, depth: Int) -> Node {
            guard let pointer = stack.toPointer(index) else { return .atom("table", .object) }
            var prefix = ""
            if stack.pushMetatable(of: index) {
                let hasToString = stack.rawGet(-1, field: "__tostring") != .nil
                stack.pop()
                let isCollection = stack.rawGet(-1, field: "__bkkind") == .number
                stack.pop()
                let name = stack.rawGet(-1, field: "__name") == .string ? stack.stringValue(-1) : nil
                stack.pop(2)
                if isCollection {
                    prefix = "bk." + stack.collectionKind(at: index).name
                } else if hasToString {
                    return toStringAtom(index, depth: depth)
                } else if let name {
                    prefix = name
                }
            }
            if shown.contains(pointer) {
                referenced.insert(pointer)
                return .reference(pointer)
            }
            if depth >= printer.maxDepth { return .elided(prefix: prefix) }
            shown.insert(pointer)
            guard stack.ensureSpace(8) else { return .elided(prefix: prefix) }

            // Keys in a scratch list, sorted, then each value read by its key (in showing order,
            // so the first showing of a shared table is the labelled one).
            var sequenceLength: Int64 = 0
            while sequenceLength <= Int64(printer.maxEntries) {
                let present = stack.rawGet(index, sequenceLength + 1) != .nil
                stack.pop()
                guard present else { break }
                sequenceLength += 1
            }
            stack.pushNewTable()
            let scratch = stack.top
            var keys: [(sort: SortKey, slot: Int64, text: String?)] = []
            var more = false
            stack.pushNil()
            while stack.next(index) {
                stack.pop()
                if stack.isInteger(-1), let i = stack.toInteger(-1), i >= 1,
                   i <= sequenceLength || sequenceLength > Int64(printer.maxEntries) {
                    continue  // shown as the list part (or past its shown end, in "...")
                }
                if keys.count >= printer.maxEntries {
                    more = true
                    continue
                }
                let slot = Int64(keys.count + 1)
                stack.pushCopy(of: -1)
                stack.rawSet(scratch, slot)
                keys.append((sortKey(at: -1), slot, keyText(at: -1)))
            }
            keys.sort { $0.sort < $1.sort }
            var entries: [(key: String?, value: Node)] = []
            let shownSequence = min(sequenceLength, Int64(printer.maxEntries))
            if sequenceLength > shownSequence { more = true }
            for i in stride(from: 1, through: shownSequence, by: 1) {
                stack.rawGet(index, i)
                entries.append((nil, node(at: -1, depth: depth + 1)))
                stack.pop()
            }
            for key in keys {
                stack.rawGet(scratch, key.slot)
                let text = key.text ?? "[\(printer.protectedToString(-1))]"
                stack.rawGet(index)
                entries.append((text, node(at: -1, depth: depth + 1)))
                stack.pop()
            }
            stack.top = scratch - 1
            return .table(pointer: pointer, prefix: prefix, entries: entries, more: more)
        }

        /// `name` for identifier keys, `["text"]` / `[1.5]` for others; nil for keys shown by tostring.
        private func keyText(at index: Int32) -> String? {
            switch stack.type(at: index) {
            case .string:
                let key = stack.stringValue(index) ?? ""
                return Completer.isName(key) ? key : "[\(printer.quotedString(at: index))]"
            case .number:
                stack.pushCopy(of: index)
                defer { stack.pop() }
                return "[\(stack.toString(-1) ?? "?")]"
            case .boolean:
                return stack.toBool(index) ? "[true]" : "[false]"
            default:
                return nil
            }
        }

        private func sortKey(at index: Int32) -> SortKey {
            switch stack.type(at: index) {
            case .number: return SortKey(rank: 0, number: stack.toNumber(index) ?? 0, text: "")
            case .string: return SortKey(rank: 1, number: 0, text: stack.stringValue(index) ?? "")
            case .boolean: return SortKey(rank: 2, number: stack.toBool(index) ? 1 : 0, text: "")
            default:
                return SortKey(rank: 3, number: 0, text: stack.typeName(at: index))
            }
        }
    }

    struct SortKey: Comparable {
        var rank: Int
        var number: Double
        var text: String

        static func < (a: SortKey, b: SortKey) -> Bool {
            if a.rank != b.rank { return a.rank < b.rank }
            if a.number != b.number { return a.number < b.number }
            return Array(a.text.utf8).lexicographicallyPrecedes(Array(b.text.utf8))
        }
    }

    /// The string at `index` (a string, not a number) as a quoted literal.
    func quotedString(at index: Int32) -> String {
        stack.withBytes(at: index) { PrettyPrinter.quote($0) } ?? "\"\""
    }

    // MARK: - Lua calls (protected)

    /// `tostring(value)` as lua.c's print does it (`__tostring`, `__name`), in protected mode.
    func toString(_ index: Int32) -> Result<String, LuaError> {
        let index = stack.absolute(index)
        stack.push(cFunction: cedit_tolstring)
        stack.pushCopy(of: index)
        do {
            try stack.call(arguments: 1, results: 1)
        } catch {
            return .failure(error)
        }
        defer { stack.pop() }
        return .success(stack.toString(-1) ?? "?")
    }

    /// `tostring(value)`, or a description of its error.
    func protectedToString(_ index: Int32) -> String {
        switch toString(index) {
        case .success(let text): text
        case .failure(let error): PrettyPrinter.describeFailure(error)
        }
    }

    static func describeFailure(_ error: LuaError) -> String { "<error in __tostring: \(error.message)>" }

    // MARK: - Text

    /// A string literal Lua would read back: quotes, escapes for control bytes and for bytes that
    /// are not UTF-8; valid UTF-8 text is kept as it is.
    static func quote(_ bytes: UnsafeRawBufferPointer) -> String {
        var out: [UInt8] = [UInt8(ascii: "\"")]
        out.reserveCapacity(bytes.count + 2)
        var i = 0
        func escape(_ text: String) { out.append(contentsOf: Array(text.utf8)) }
        while i < bytes.count {
            let byte = bytes[i]
            switch byte {
            case UInt8(ascii: "\""): escape("\\\"")
            case UInt8(ascii: "\\"): escape("\\\\")
            case UInt8(ascii: "\n"): escape("\\n")
            case UInt8(ascii: "\r"): escape("\\r")
            case UInt8(ascii: "\t"): escape("\\t")
            case 0x20 ..< 0x7f: out.append(byte)
            case 0x80...:
                let length = validUTF8Length(bytes, at: i)
                if length > 0 {
                    out.append(contentsOf: bytes[i ..< i + length])
                    i += length
                    continue
                }
                escape("\\\(byte)")
            default:
                // \ddd, three digits when a digit follows (so "\0" "1" does not read as "\01")
                let next = i + 1 < bytes.count ? bytes[i + 1] : 0
                let digits = String(byte)
                let padded = (UInt8(ascii: "0") ... UInt8(ascii: "9")).contains(next)
                    ? String(repeating: "0", count: 3 - digits.count) + digits : digits
                escape("\\" + padded)
            }
            i += 1
        }
        out.append(UInt8(ascii: "\""))
        return String(decoding: out, as: UTF8.self)
    }

    /// The length of the UTF-8 sequence starting at `i` when it is well formed, else 0.
    static func validUTF8Length(_ bytes: UnsafeRawBufferPointer, at i: Int) -> Int {
        let lead = bytes[i]
        let length = lead >= 0xf0 && lead <= 0xf4 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc2 && lead < 0xe0 ? 2 : 0
        guard length > 0, i + length <= bytes.count else { return 0 }
        var scalar = UInt32(lead) & (length == 2 ? 0x1f : length == 3 ? 0x0f : 0x07)
        for k in 1 ..< length {
            let continuation = bytes[i + k]
            guard continuation & 0xc0 == 0x80 else { return 0 }
            scalar = scalar << 6 | UInt32(continuation & 0x3f)
        }
        let minimum: UInt32 = length == 2 ? 0x80 : length == 3 ? 0x800 : 0x10000
        guard scalar >= minimum, scalar <= 0x10ffff, !(0xd800 ... 0xdfff).contains(scalar) else { return 0 }
        return length
    }

    struct Renderer {
        let width: Int
        let colors: Bool
        let referenced: Set<UnsafeRawPointer>
        var labels: [UnsafeRawPointer: Int] = [:]

        init(width: Int, colors: Bool, referenced: Set<UnsafeRawPointer>) {
            self.width = width
            self.colors = colors
            self.referenced = referenced
        }

        func paint(_ text: String, _ style: Style) -> String {
            guard colors, let code = style.code else { return text }
            return "\u{1B}[" + code + "m" + text + "\u{1B}[0m"
        }

        /// Columns `text` takes on screen (colour sequences take none).
        static func visibleWidth(_ text: String) -> Int {
            var width = 0
            var inEscape = false
            for scalar in text.unicodeScalars {
                if inEscape {
                    if scalar == "m" { inEscape = false }
                } else if scalar == "\u{1B}" {
                    inEscape = true
                } else {
                    width += 1
                }
            }
            return width
        }

        mutating func label(_ pointer: UnsafeRawPointer) -> String {
            guard referenced.contains(pointer) else { return "" }
            if let existing = labels[pointer] { return "<\(existing)>" }
            let number = labels.count + 1
            labels[pointer] = number
            return "<\(number)>"
        }

        mutating func render(_ node: Node, indent: Int) -> String {
            switch node {
            case .atom(let text, let style): return paint(text, style)
            case .elided(let prefix): return prefix + "{...}"
            case .reference(let pointer):
                if let number = labels[pointer] { return "<\(number)>" }
                return "<table>"
            case .table(let pointer, let prefix, let entries, let more):
                let head = label(pointer) + prefix
                if entries.isEmpty && !more { return head + "{}" }
                var saved = self
                let items = entries.map { ($0.key.map { $0 + " = " } ?? "") + saved.render($0.value, indent: indent + 2) }
                    + (more ? ["..."] : [])
                let oneLine = head + "{ " + items.joined(separator: ", ") + " }"
                if !oneLine.contains("\n") && indent + Renderer.visibleWidth(oneLine) <= width {
                    self = saved
                    return oneLine
                }
                let pad = String(repeating: " ", count: indent + 2)
                let lines = entries.map { pad + ($0.key.map { $0 + " = " } ?? "") + render($0.value, indent: indent + 2) }
                    + (more ? [pad + "..."] : [])
                return head + "{\n" + lines.joined(separator: ",\n") + "\n" + String(repeating: " ", count: indent) + "}"
            }
        }
    }
}
