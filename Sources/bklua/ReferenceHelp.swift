import BlocksBridge

/// `help(bk.map)`, `help(ch.receive)`, `help("map")`, `:help Task` and `:help Channel:receive` at the
/// prompt: an entry of docs/reference.md, which is compiled into bklua (`reference.md` here is a
/// link to it, embedded by SwiftPM), so it is the reference of this very build.
///
/// The reference has two kinds of entries: a function's, headed `### bk.NAME(...)`, and a kind of
/// object's, headed `### <Kind> objects (bk.Type, ...)`, with one bullet per method or field
/// (`- \`ch:receive([timeout])\`: ...`). A method's help is its type's heading and its bullet.
enum ReferenceHelp {
    /// One line: what help is for, and the forms it takes.
    static let usage = "help(x) or :help name: the reference entry of a bk function, object or method "
        + "(help(bk.map), help(ch.receive), help(task), :help map, :help Task, :help Channel:receive)\n"

    /// One `### ` entry: its lines (heading first), the functions it documents (a `### bk.` heading)
    /// or the types (any other `### ` heading naming `bk.Type`s).
    struct Entry {
        let lines: [Substring]
        let functions: [String]
        let types: [String]

        var text: String { lines.joined(separator: "\n") + "\n" }

        /// The bullet documenting `member` (`- \`ch:receive(...)\`: ...` and its continuation
        /// lines), after the heading; nil when no bullet names it.
        func member(_ member: String) -> String? {
            var index = 1
            while index < lines.count {
                let line = lines[index]
                index += 1
                guard line.hasPrefix("- ") else { continue }
                var bullet = [line]
                while index < lines.count, lines[index].hasPrefix("  ") {
                    bullet.append(lines[index])
                    index += 1
                }
                if ReferenceHelp.members(ofBullet: line).contains(member) {
                    return ([lines[0]] + bullet).joined(separator: "\n") + "\n"
                }
            }
            return nil
        }
    }

    static let entries: [Entry] = {
        let text = String(decoding: PackageResources.reference_md, as: UTF8.self)
        var entries: [Entry] = []
        var lines: [Substring] = []
        func close() {
            while let last = lines.last, last.isEmpty { lines.removeLast() }
            if let heading = lines.first {
                let names = bkNames(in: heading.dropFirst(4))
                let isFunction = heading.hasPrefix("### bk.")
                entries.append(Entry(lines: lines, functions: isFunction ? names : [], types: isFunction ? [] : names))
            }
            lines = []
        }
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("#") { close() }
            if line.hasPrefix("### ") || !lines.isEmpty { lines.append(line) }
        }
        close()
        return entries
    }()

    /// The names after each `bk.` in `text`: `bk.indexSet([c]) / bk.indexSet(first)` gives indexSet twice.
    private static func bkNames(in text: Substring) -> [String] {
        var names: [String] = []
        var rest = text
        while !rest.isEmpty {
            if rest.hasPrefix("bk.") {
                let name = rest.dropFirst(3).prefix { $0.isLetter || $0.isNumber || $0 == "_" }
                if !name.isEmpty { names.append(String(name)) }
                rest = rest.dropFirst(3 + name.count)
            } else {
                rest = rest.dropFirst()
            }
        }
        return names
    }

    /// The members a bullet documents: its code spans `x:name(...)` / `x.name` before its first
    /// `: ` outside code (`- \`s:add(v)\` (sets, ...): adds` gives add; `bk_name` counts as name).
    static func members(ofBullet line: Substring) -> [String] {
        var members: [String] = []
        var inCode = false
        var span = ""
        var previous: Character = " "
        for character in line.dropFirst(2) {
            if character == "`" {
                if inCode, let member = member(ofSpan: span) { members.append(member) }
                inCode.toggle()
                span = ""
            } else if inCode {
                span.append(character)
            } else if previous == ":" && character == " " {
                break
            }
            previous = inCode ? " " : character
        }
        return members
    }

    /// `ch:receive([timeout])` gives receive, `p.lineNumber` lineNumber, `inv:bk_invoke()` invoke.
    private static func member(ofSpan span: String) -> String? {
        let isNameCharacter: (Character) -> Bool = { $0.isLetter || $0.isNumber || $0 == "_" }
        let receiver = span.prefix(while: isNameCharacter)
        let rest = span.dropFirst(receiver.count)
        guard !receiver.isEmpty, receiver != "bk", let separator = rest.first, separator == ":" || separator == "." else {
            return nil
        }
        var name = rest.dropFirst().prefix(while: isNameCharacter)
        if name.hasPrefix("bk_") { name = name.dropFirst(3) }
        return name.isEmpty ? nil : String(name)
    }

    /// The entry of the function `bk.name`.
    static func entry(named name: String) -> String? {
        entries.first { $0.functions.contains(name) }?.text
    }

    /// The entry of the kind of object `bk.name` (`Task`, `Channel`, `array`, ...).
    static func entry(ofType name: String) -> String? {
        entries.first { $0.types.contains(name) }?.text
    }

    /// The bullet of `member` in the entry of the type `type`.
    static func entry(ofType type: String, member: String) -> String? {
        let name = member.hasPrefix("bk_") ? String(member.dropFirst(3)) : member
        return entries.first { $0.types.contains(type) }?.member(name)
    }

    /// The answer for a name typed as text: `map`, `bk.map`, `Task`, `bk.Task`, `Channel:receive`,
    /// `bk.Channel.receive`, or a receiver as the reference writes it (`ch:receive`).
    static func text(forName given: Substring) -> String {
        var name = given
        if name.hasPrefix("bk.") || name.hasPrefix("bk_") { name = name.dropFirst(3) }
        if let separator = name.lastIndex(where: { $0 == ":" || $0 == "." }) {
            var type = name[..<separator]
            if type.hasPrefix("bk.") { type = type.dropFirst(3) }
            let member = String(name[name.index(after: separator)...])
            if let text = entry(ofType: String(type), member: member) { return text }
            // A receiver named as in the reference's bullets (`ch:receive`, `timer.isValid`).
            for entry in entries where !entry.types.isEmpty {
                if let text = entry.member(member),
                   text.contains("`" + type + ":" + member) || text.contains("`" + type + "." + member) {
                    return text
                }
            }
            return "help: no reference entry for \(given)\n"
        }
        return entry(named: String(name)) ?? entry(ofType: String(name)) ?? "help: no reference entry for bk.\(name)\n"
    }

    /// The text for the argument at 1 (a bk function or value, an object the bridge made, one of
    /// its methods, or a name), or the usage.
    static func text(for stack: LuaStack) -> String {
        if stack.type(at: 1) == .none { return usage }
        if stack.type(at: 1) == .string, let given = stack.toString(1) {
            return text(forName: Substring(given))
        }
        if let name = moduleName(of: 1, on: stack) {
            return entry(named: name) ?? "help: no reference entry for bk.\(name)\n"
        }
        if stack.type(at: 1) == .function {
            if let (type, member) = methodName(of: 1, on: stack) {
                return entry(ofType: type, member: member) ?? entry(ofType: type)
                    ?? "help: no reference entry for bk.\(type):\(member)\n"
            }
            return "help: not a bk function (function)\n" + usage
        }
        if let type = typeName(of: 1, on: stack) {
            return entry(ofType: type) ?? "help: no reference entry for bk.\(type)\n"
        }
        return "help: not a bk function (\(stack.typeName(at: 1)))\n" + usage
    }

    /// The value's name in the module table (bk_map is bk.map: the same function).
    private static func moduleName(of index: Int32, on stack: LuaStack) -> String? {
        stack.withRestoredTop { () -> String? in
            BKModule.pushModule(on: stack)
            let module = stack.top
            guard stack.type(at: module) == .table else { return nil }
            stack.pushNil()
            while stack.next(module) {
                if stack.rawEqual(-1, index), let key = stack.stringValue(-2) { return key }
                stack.pop()
            }
            return nil
        }
    }

    /// `bk.Channel` for a bridged channel, `bk.array` for an array, ...: the `bk.` name of the raw
    /// metatable's `__name`, without the prefix.
    private static func typeName(of index: Int32, on stack: LuaStack) -> String? {
        stack.withRestoredTop { () -> String? in
            guard stack.pushMetatable(of: index) else { return nil }
            return className(of: stack.top, on: stack)
        }
    }

    private static func className(of index: Int32, on stack: LuaStack) -> String? {
        stack.withRestoredTop { () -> String? in
            guard stack.type(at: index) == .table, stack.rawGet(index, field: "__name") == .string,
                  let name = stack.stringValue(-1), name.hasPrefix("bk.") else { return nil }
            return String(name.dropFirst(3))
        }
    }

    /// The class and name of a method: a function held by the method table (`methods` or an
    /// `__index` table) of a `bk.` class. The classes are the metatables in the registry (bridged
    /// classes, collection kinds) and in its tables one level down (the tasks engine keeps
    /// `bk.Task`, `bk.Debounced` and `bk.Throttled` in its table): a method exists only once its
    /// class's metatable was made, so its class is there. Raw reads only.
    private static func methodName(of function: Int32, on stack: LuaStack) -> (String, String)? {
        stack.withRestoredTop { () -> (String, String)? in
            guard stack.ensureSpace(12) else { return nil }
            stack.pushCopy(of: LuaStack.registryIndex)
            let registry = stack.top
            var found: (String, String)?
            stack.pushNil()
            while found == nil, stack.next(registry) {
                if stack.type(at: -1) == .table {
                    let table = stack.top
                    found = method(of: function, inClass: table, on: stack)
                    if found == nil, className(of: table, on: stack) == nil {
                        stack.pushNil()
                        while found == nil, stack.next(table) {
                            if stack.type(at: -1) == .table { found = method(of: function, inClass: stack.top, on: stack) }
                            stack.pop()
                        }
                    }
                }
                stack.pop()
            }
            return found
        }
    }

    /// (class, method) when the table at `index` is a `bk.` class whose methods hold the function.
    private static func method(of function: Int32, inClass index: Int32, on stack: LuaStack) -> (String, String)? {
        guard let type = className(of: index, on: stack) else { return nil }
        return stack.withRestoredTop { () -> (String, String)? in
            for field in ["methods", "__index"] where stack.rawGet(index, field: field) == .table {
                let methods = stack.top
                stack.pushNil()
                while stack.next(methods) {
                    if stack.rawEqual(-1, function), let key = stack.stringValue(-2) {
                        return (type, key.hasPrefix("bk_") ? String(key.dropFirst(3)) : key)
                    }
                    stack.pop()
                }
                stack.pop()
            }
            return nil
        }
    }

    /// The global `help`, for the prompt.
    static func install(on stack: LuaStack) {
        stack.pushGlobalTable()
        stack.push(function: "help") { stack in
            StandardStreams.writeOutput(text(for: stack))
            return 0
        }
        stack.rawSet(-2, field: "help")
        stack.pop()
    }

    /// `:help name` typed at the prompt: true when `line` was that command (and was answered).
    static func command(_ line: String) -> Bool {
        guard line == ":help" || line.hasPrefix(":help ") else { return false }
        var name = line.dropFirst(5).drop { $0 == " " || $0 == "\t" }
        while let last = name.last, last == " " || last == "\t" { name = name.dropLast() }
        if name.isEmpty { StandardStreams.writeOutput(usage); return true }
        StandardStreams.writeOutput(text(forName: name))
        return true
    }
}
