import CLuaShim
#if canImport(Glibc)
import Glibc
#endif

/// The client's breakpoints: their ids, conditions, hit conditions and log messages, kept here
/// for the agent (which decides on a hit), while the C hook client gets only the lines and names it
/// checks on every event.
final class DebugBreakpoints: @unchecked Sendable {
    struct Entry {
        var id: Int
        var condition: String?
        var hitCondition: String?
        var logMessage: String?
    }

    private let lock = PlainLock()
    private var nextID = 1
    private var lines: [String: [Int: Entry]] = [:]  // normalized path -> line -> breakpoint
    private var functions: [String: Entry] = [:]

    static func normalized(_ path: String) -> String {
        guard let normal = bk_debugger_normalize_path(path) else { return path }
        defer { free(normal) }
        return String(cString: normal)
    }

    /// `setBreakpoints`: replaces the file's breakpoints; the response body. `lineBase`: the
    /// client's first line (0 or 1; Lua's is 1).
    func setLines(_ arguments: JSONValue, lineBase: Int, in clients: [OpaquePointer]) -> JSONValue {
        guard let path = arguments["source"]?["path"]?.string else {
            return .object([("breakpoints", .array([]))])
        }
        let normal = DebugBreakpoints.normalized(path)
        let items = arguments["breakpoints"]?.array ?? []
        // Lua's lines (1...): 0 for a line that is none.
        let asked = items.map { item -> Int32 in
            guard let asked = item["line"]?.int, asked < Int.max, case let line = asked + 1 - lineBase, line > 0 else { return 0 }
            return Int32(clamping: line)
        }
        let (placed, checked) = DebugBreakpoints.place(asked, in: normal)
        var byLine: [Int: Entry] = [:]
        var answers: [JSONValue] = []
        var answerOf: [Int: (index: Int, moved: Bool)] = [:]  // the answer of each line's breakpoint
        lock.withLock {
            for (index, item) in items.enumerated() {
                let line = Int(asked[index]), at = Int(placed[index])
                guard line > 0 else {
                    answers.append(.object([("verified", .bool(false)), ("message", .string("no line"))]))
                    continue
                }
                guard at > 0 else {
                    let why = at < 0 ? "line \(line - 1 + lineBase) is past the end of the file"
                                     : "no code on line \(line - 1 + lineBase) or after it in its function"
                    answers.append(.object([("verified", .bool(false)), ("message", .string(why)),
                                            ("line", .number(Double(line - 1 + lineBase)))]))
                    continue
                }
                if let problem = DebugBreakpoints.hitConditionProblem(item["hitCondition"]?.string) {
                    answers.append(.object([("verified", .bool(false)), ("message", .string(problem)),
                                            ("line", .number(Double(line - 1 + lineBase)))]))
                    continue
                }
                // One breakpoint a line: of two that land on one line, the one set on it wins, and
                // the other is answered not verified (it was silently replaced: a log point moved
                // onto a breakpoint's line made that breakpoint never stop).
                let taken = byLine[at] != nil
                let another = JSONValue.string("line \(at - 1 + lineBase) has another breakpoint")
                if taken && (at != line || answerOf[at]?.moved == false) {
                    answers.append(.object([("verified", .bool(false)), ("line", .number(Double(line - 1 + lineBase))),
                                            ("message", another)]))
                    continue
                }
                if taken, let earlier = answerOf[at] {
                    answers[earlier.index] = .object([("verified", .bool(false)), ("message", another)])
                }
                let entry = Entry(id: nextID, condition: DebugBreakpoints.condition(item["condition"]?.string),
                                  hitCondition: item["hitCondition"]?.string, logMessage: item["logMessage"]?.string)
                nextID += 1
                byLine[at] = entry
                answerOf[at] = (answers.count, at != line)
                var answer: [(String, JSONValue)] = [("id", .number(Double(entry.id))), ("verified", .bool(true)),
                                                     ("line", .number(Double(at - 1 + lineBase)))]
                if at != line {
                    answer.append(("message", .string("moved from line \(line - 1 + lineBase) to the next line with code")))
                } else if !checked {
                    answer.append(("message", .string("not checked for code: the file cannot be read or compiled now")))
                }
                answers.append(.object(answer))
            }
            lines[normal] = byLine
        }
        let sorted = byLine.keys.sorted().map { Int32(clamping: $0) }
        sorted.withUnsafeBufferPointer { lines in
            for client in clients { bk_debugger_set_lines(client, normal, lines.baseAddress, Int32(lines.count)) }
        }
        return .object([("breakpoints", .array(answers))])
    }

    /// `setFunctionBreakpoints`: replaces them all; the response body.
    func setFunctions(_ arguments: JSONValue, in clients: [OpaquePointer]) -> JSONValue {
        var answers: [JSONValue] = []
        var names: [UInt8] = []
        var count: Int32 = 0
        lock.withLock {
            functions = [:]
            for item in arguments["breakpoints"]?.array ?? [] {
                guard let name = item["name"]?.string, !name.isEmpty, !name.utf8.contains(0) else {
                    answers.append(.object([("verified", .bool(false)), ("message", .string("a function name is needed"))]))
                    continue
                }
                guard name.utf8.count < 200 else {
                    answers.append(.object([("verified", .bool(false)), ("message", .string("a function name has at most 199 bytes"))]))
                    continue
                }
                if let problem = DebugBreakpoints.functionNameProblem(name)
                    ?? DebugBreakpoints.hitConditionProblem(item["hitCondition"]?.string) {
                    answers.append(.object([("verified", .bool(false)), ("message", .string(problem))]))
                    continue
                }
                let entry = Entry(id: nextID, condition: DebugBreakpoints.condition(item["condition"]?.string),
                                  hitCondition: item["hitCondition"]?.string)
                nextID += 1
                functions[name] = entry
                names += Array(name.utf8) + [0]
                count += 1
                answers.append(.object([("id", .number(Double(entry.id))), ("verified", .bool(true))]))
            }
        }
        names.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { names in
                for client in clients { bk_debugger_set_functions(client, names.baseAddress, count) }
            }
        }
        return .object([("breakpoints", .array(answers))])
    }

    /// Where breakpoints asked at Lua lines `asked` (0: none) stop in the file `path`: the line
    /// itself, the next line with code, 0 (none after it in its function), -1 (past the end). A
    /// file that cannot be read or compiled now (it may exist only later, or be a host's chunk
    /// name) keeps the lines asked (`checked` false).
    static func place(_ asked: [Int32], in path: String) -> (placed: [Int32], checked: Bool) {
        var placed = asked
        let ok = asked.withUnsafeBufferPointer { asked in
            placed.withUnsafeMutableBufferPointer { placed in
                bk_debugger_place_lines(path, asked.baseAddress, Int32(asked.count), placed.baseAddress)
            }
        }
        return ok != 0 ? (placed.enumerated().map { asked[$0.offset] > 0 ? $0.element : 0 }, true) : (asked, false)
    }

    /// Why `name` can never reach a function from the globals (an empty part, as in `a..b` or `a.`,
    /// or a `:` before the last part), or is mistyped (a part with blanks around it, as in `greet `:
    /// it would be looked up as `_G["greet "]` and never stop), or nil. Parts are looked up as they
    /// are (any bytes but `.` and `:`), so `_G["héllo"]` is reached by `héllo`.
    static func functionNameProblem(_ name: String) -> String? {
        let parts = name.utf8.split(omittingEmptySubsequences: false, whereSeparator: { $0 == 46 || $0 == 58 })
        let colon = name.utf8.firstIndex(of: 58)
        let colonBeforeLast = colon.map { name.utf8[name.utf8.index(after: $0)...].contains(where: { $0 == 46 || $0 == 58 }) } ?? false
        guard parts.allSatisfy({ !$0.isEmpty }), !colonBeforeLast else {
            return "'\(name.prefix(100))' is not a global or dotted name (greet, Shapes.area, Account:deposit)"
        }
        let blanks = parts.contains { part in
            part.first.map { spaces.contains($0) } == true || part.last.map { spaces.contains($0) } == true
        }
        if blanks { return "'\(name.prefix(100))' has blanks around a part of the name" }
        return nil
    }

    /// Blanks, as a condition's or a hit condition's text may have around it (Lua's isspace).
    private static let spaces: Set<UInt8> = [32, 9, 10, 11, 12, 13]

    /// A condition, or nil for none: a blank one (spaces only) is none, as editors mean it (it was
    /// evaluated, gave nothing, and the breakpoint never stopped).
    static func condition(_ text: String?) -> String? {
        guard let text, !text.utf8.allSatisfy({ spaces.contains($0) }) else { return nil }
        return text
    }

    /// Why a hitCondition is not one of the forms the agent counts with (`N`, `= N`, `== N`, `>= N`,
    /// `> N`, `< N`, `<= N`, `% N`: N a whole number, above 0 after `%`), or nil when it is one (or
    /// there is none). A malformed one used to mean "always", and `% 0` "never", without a word.
    static func hitConditionProblem(_ text: String?) -> String? {
        guard let text else { return nil }
        var bytes = Array(text.utf8)[...]
        while let b = bytes.first, spaces.contains(b) { bytes.removeFirst() }
        while let b = bytes.last, spaces.contains(b) { bytes.removeLast() }
        if bytes.isEmpty { return nil }
        var op: [UInt8] = []
        while let b = bytes.first, "<>=%".utf8.contains(b) { op.append(b); bytes.removeFirst() }
        while let b = bytes.first, spaces.contains(b) { bytes.removeFirst() }
        let opText = String(decoding: op, as: UTF8.self)
        let number = bytes.count <= 19 && !bytes.isEmpty && bytes.allSatisfy({ $0 >= 48 && $0 <= 57 })
            ? Int(String(decoding: bytes, as: UTF8.self)) : nil
        guard ["", "=", "==", ">=", ">", "<", "<=", "%"].contains(opText), let number, opText != "%" || number > 0 else {
            return "hit condition '\(text.prefix(100))': expected N, >= N, > N, < N, <= N or % N (N a whole number, above 0 after %)"
        }
        // Hits are counted from 1: these never hold (they would never stop, without a word).
        if (["", "=", "=="].contains(opText) && number == 0) || (opText == "<" && number <= 1) || (opText == "<=" && number == 0) {
            return "hit condition '\(text.prefix(100))' never holds: hits are counted from 1"
        }
        return nil
    }

    func line(path: String, line: Int) -> Entry? { lock.withLock { lines[path]?[line] } }
    func function(name: String) -> Entry? { lock.withLock { functions[name] } }
}
