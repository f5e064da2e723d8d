/// Options tables: one reading for every options argument of the API, so that each accepts the
/// list form (`{"new", "old"}`) and the key form (`{new = true, old = true}`) alike, and refuses
/// what it does not know (a misspelled `{idenitfier = "x"}` is an error, never silently ignored).
extension LuaStack {
    /// Reads the options table at `index` (raw walk; no metamethod runs). Flags come as list entries
    /// `"name"` or as keys `name = true` (`false` leaves the flag off); keys in `fields` are allowed
    /// and left for the caller to read. Anything else is an argument error naming the option.
    /// - Returns: the flags that are on.
    /// - Throws: `bad argument #N to 'f' (invalid option 'x'; expected ...)`.
    public func checkOptions(_ index: Int32, flags: [String], fields: [String] = []) throws(LuaRaise) -> Set<String> {
        let table = absolute(index)
        return try withRestoredTop { () throws(LuaRaise) -> Set<String> in
            let length = listCount(table)   // list entries: 1 ... n up to the first nil
            var on: Set<String> = []
            pushNil()
            while next(table) {
                if type(at: -2) == .number, isInteger(-2), let position = toInteger(-2), position >= 1, position <= length {
                    guard type(at: -1) == .string, let name = toString(-1), flags.contains(name) else {
                        throw .argument(index, "invalid option \(Self.describeOption(self, at: -1)); "
                                        + Self.expectedOptions(flags: flags, fields: fields))
                    }
                    on.insert(name)
                } else if type(at: -2) == .string, let name = toString(-2), flags.contains(name) || fields.contains(name) {
                    if flags.contains(name) {
                        guard type(at: -1) == .boolean else {
                            throw .argument(index, "option '\(name)' must be true or false (got \(typeName(at: -1)))")
                        }
                        if toBool(-1) { on.insert(name) }
                    }
                } else {
                    throw .argument(index, "invalid option \(Self.describeOption(self, at: -2)); "
                                    + Self.expectedOptions(flags: flags, fields: fields))
                }
                pop()
            }
            return on
        }
    }

    private static func describeOption(_ stack: LuaStack, at index: Int32) -> String {
        if stack.type(at: index) == .string, let name = stack.toString(index) { return "'\(name)'" }
        if stack.type(at: index) == .number, let text = stack.toString(index) { return "[\(text)]" }
        return "(a \(stack.typeName(at: index)))"
    }

    private static func expectedOptions(flags: [String], fields: [String]) -> String {
        let all = flags.map { "\"\($0)\"" } + fields.map { "\($0) = ..." }
        return "expected " + all.joined(separator: ", ")
    }
}
