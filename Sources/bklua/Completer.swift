import BlocksBridge
import CLuaShim

/// Tab completion of Lua names: globals (the `bk_` ones included) and keywords, fields after `.`
/// and methods after `:`. Lookups are raw and follow `__index` tables (and a bridged class's
/// method table), so completing never runs user code.
final class Completer {
    let stack: LuaStack

    init(stack: LuaStack) { self.stack = stack }

    static let keywords = [
        "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if", "in",
        "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while",
    ]

    /// Every full replacement for `word` (e.g. `string.fo` gives `string.format`).
    func candidates(for word: String) -> [String] {
        return stack.withRestoredTop { () -> [String] in
            guard stack.ensureSpace(48) else { return [] }
            let bytes = Array(word.utf8)
            guard let separator = bytes.lastIndex(where: { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: ":") }) else {
                stack.pushGlobalTable()
                var names = names(in: stack.top, prefix: word, functionsOnly: false)
                names.formUnion(Completer.keywords.filter { $0.hasPrefix(word) })
                return names.sorted()
            }
            let path = String(decoding: bytes[..<separator], as: UTF8.self)
            let partial = String(decoding: bytes[(separator + 1)...], as: UTF8.self)
            let isMethod = bytes[separator] == UInt8(ascii: ":")
            let parts = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            guard parts.allSatisfy(Completer.isName) else { return [] }
            stack.pushGlobalTable()
            for part in parts {
                guard field(part, of: stack.top) else { return [] }
                stack.remove(at: -2)
            }
            let separatorText = isMethod ? ":" : "."
            return names(in: stack.top, prefix: partial, functionsOnly: isMethod)
                .sorted().map { path + separatorText + $0 }
        }
    }

    /// Pushes `value[name]` read raw through `__index` tables; false (nothing pushed) when absent.
    private func field(_ name: String, of index: Int32) -> Bool {
        var current = stack.absolute(index)
        let base = stack.top
        for _ in 0 ..< 16 {
            if stack.type(at: current) == .table {
                if stack.rawGet(current, field: name) != .nil {
                    stack.insert(at: base + 1)
                    stack.top = base + 1
                    return true
                }
                stack.pop()
            }
            guard let next = pushIndexTable(of: current) else { break }
            current = next
        }
        stack.top = base
        return false
    }

    /// Pushes the table that `__index` (or a bridged class's `methods`) of the value at `index`
    /// refers to, returning its index; nil (nothing pushed) when there is none.
    private func pushIndexTable(of index: Int32) -> Int32? {
        guard stack.pushMetatable(of: index) else { return nil }
        for key in ["__index", "methods"] {
            if stack.rawGet(-1, field: key) == .table {
                stack.remove(at: -2)
                return stack.top
            }
            stack.pop()
        }
        stack.pop()
        return nil
    }

    /// Names (identifiers) of the fields of the value at `index` and of its `__index` tables.
    private func names(in index: Int32, prefix: String, functionsOnly: Bool) -> Set<String> {
        var found = Set<String>()
        var seen = Set<UnsafeRawPointer>()
        // Methods: every function's identity, to list `obj:map` once though `obj:bk_map` is the
        // same function (unless `bk_` was typed).
        var functions: [String: UnsafeRawPointer] = [:]
        var current = stack.absolute(index)
        for _ in 0 ..< 16 {
            if stack.type(at: current) == .table, let pointer = stack.toPointer(current) {
                guard seen.insert(pointer).inserted else { break }
                stack.pushNil()
                while stack.next(current) {
                    if functionsOnly, let key = stack.stringValue(-2), stack.type(at: -1) == .function,
                       functions[key] == nil, let function = stack.toPointer(-1) {
                        functions[key] = function
                    }
                    if let key = stack.stringValue(-2), key.hasPrefix(prefix), Completer.isName(key),
                       !functionsOnly || stack.type(at: -1) == .function {
                        found.insert(key)
                    }
                    stack.pop()
                }
            }
            if !functionsOnly, let object = stack.bridgedObject(at: current),
               let bridged = type(of: object) as? any LuaBridged.Type {
                // A bridged object's properties are read by its __index function: list them too.
                found.formUnion(bridged.luaClass.properties.keys.filter { $0.hasPrefix(prefix) })
            }
            guard let next = pushIndexTable(of: current) else { break }
            current = next
        }
        if functionsOnly && !prefix.hasPrefix("bk_") {
            found = found.filter { name in
                guard name.hasPrefix("bk_"), let plain = functions[String(name.dropFirst(3))] else { return true }
                return plain != functions[name]
            }
        }
        return found
    }

    /// A Lua name: letters, digits and `_`, not starting with a digit, not a keyword.
    static func isName(_ text: String) -> Bool {
        guard let first = text.utf8.first, !(UInt8(ascii: "0") ... UInt8(ascii: "9")).contains(first) else {
            return false
        }
        return text.utf8.allSatisfy { byte in
            byte == UInt8(ascii: "_") || (UInt8(ascii: "a") ... UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "A") ... UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0") ... UInt8(ascii: "9")).contains(byte)
        } && !keywords.contains(text)
    }
}
