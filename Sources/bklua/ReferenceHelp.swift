import BlocksBridge

/// `help(bk.map)`, `help("map")` and `:help map` at the prompt: the function's entry of
/// docs/reference.md, which is compiled into bklua (`reference.md` here is a link to it, embedded
/// by SwiftPM), so it is the reference of this very build.
enum ReferenceHelp {
    static let usage = "help(f) or :help name: the reference entry of a bk function (help(bk.map), :help map)\n"

    /// The entry of `bk.name`: its `### bk.name...` heading and the text up to the next heading.
    static func entry(named name: String) -> String? {
        let text = String(decoding: PackageResources.reference_md, as: UTF8.self)
        var lines: [Substring] = []
        var inEntry = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("#") {
                if inEntry { break }
                inEntry = headingNames(line).contains(name)
            }
            if inEntry { lines.append(line) }
        }
        guard !lines.isEmpty else { return nil }
        while let last = lines.last, last.isEmpty { lines.removeLast() }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The names a heading documents: `### bk.indexSet([c]) / bk.indexSet(first)` gives indexSet.
    private static func headingNames(_ line: Substring) -> [String] {
        guard line.hasPrefix("### ") else { return [] }
        var names: [String] = []
        var rest = line.dropFirst(4)
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

    /// The text for the argument at 1 (a value of the bk module, or a name), or the usage.
    static func text(for stack: LuaStack) -> String {
        if stack.type(at: 1) == .none { return usage }
        var name: String?
        if stack.type(at: 1) == .string, let given = stack.toString(1) {
            var trimmed = Substring(given)
            if trimmed.hasPrefix("bk.") || trimmed.hasPrefix("bk_") { trimmed = trimmed.dropFirst(3) }
            name = String(trimmed)
        } else {
            // The value's name in the module table (bk_map is bk.map: the same function).
            BKModule.pushModule(on: stack)
            let module = stack.top
            if stack.type(at: module) == .table {
                stack.pushNil()
                while stack.next(module) {
                    if stack.rawEqual(-1, 1), let key = stack.stringValue(-2) {
                        name = key
                        stack.pop(2)
                        break
                    }
                    stack.pop()
                }
            }
            stack.top = module - 1
        }
        guard let name else { return "help: not a bk function (\(stack.typeName(at: 1)))\n" + usage }
        return entry(named: name) ?? "help: no reference entry for bk.\(name)\n"
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
        if name.hasPrefix("bk.") || name.hasPrefix("bk_") { name = name.dropFirst(3) }
        StandardStreams.writeOutput(entry(named: String(name)) ?? "help: no reference entry for bk.\(name)\n")
        return true
    }
}
