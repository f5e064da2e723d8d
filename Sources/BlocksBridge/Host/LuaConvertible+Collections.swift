
// Containers convert element by element: a Swift array is a Lua sequence, a dictionary a table of
// key/value pairs, an Optional is nil or its value. Reads are raw (no metamethods run).

extension Optional: LuaConvertible where Wrapped: LuaConvertible {
    public func push(on stack: LuaStack) {
        if let value = self { value.push(on: stack) } else { stack.pushNil() }
    }
    /// nil or none reads as `.some(nil)`; any other value must convert to `Wrapped`.
    public static func read(from stack: LuaStack, at index: Int32) -> Wrapped?? {
        if stack.isNoneOrNil(index) { return .some(nil) }
        return Wrapped.read(from: stack, at: index).map { .some($0) }
    }
    public static var luaTypeName: String { Wrapped.luaTypeName }
    @inlinable public static var pushesAsIs: Bool { Wrapped.pushesAsIs }
    public static func check(_ stack: LuaStack, at index: Int32) throws(LuaRaise) -> Wrapped? {
        if stack.isNoneOrNil(index) { return nil }
        return try Wrapped.check(stack, at: index)
    }
}

extension Array: LuaConvertible where Element: LuaConvertible {
    public func push(on stack: LuaStack) {
        guard stack.ensureSpace(2) else {
            stack.pushNil()
            stack.recordPushFailure("stack overflow")
            return
        }
        stack.pushNewTable(arrayCount: Int32(clamping: count))
        for (offset, element) in enumerated() {
            element.push(on: stack)
            stack.rawSet(-2, Int64(offset + 1))
        }
    }
    /// A table's sequence `t[1] ... t[n]`, up to its first nil (as `ipairs`; never sized from `#t`,
    /// which a script can make 2^40); nil if any element does not convert, including the nil of a
    /// hole before `#t` when `Element` cannot be nil.
    public static func read(from stack: LuaStack, at index: Int32) -> [Element]? {
        guard stack.type(at: index) == .table, stack.ensureSpace(2) else { return nil }
        let table = stack.absolute(index)
        let count = stack.listCount(table)
        var result: [Element] = []
        result.reserveCapacity(LuaStack.sizeHint(count))
        var i: Int64 = 1
        while i <= count {
            stack.rawGet(table, i)
            let element = Element.read(from: stack, at: -1)
            stack.pop()
            guard let element else { return nil }
            result.append(element)
            i += 1
        }
        if stack.rawLength(table) > count {  // a hole before the border
            stack.pushNil()
            let nilConverts = Element.read(from: stack, at: -1) != nil
            stack.pop()
            if !nilConverts { return nil }
        }
        return result
    }
    public static var luaTypeName: String { "table" }
    /// A table whose element does not convert names it: `(number expected at [3], got string)`.
    public static func check(_ stack: LuaStack, at index: Int32) throws(LuaRaise) -> [Element] {
        if let value = read(from: stack, at: index) { return value }
        guard stack.type(at: index) == .table else { throw .type(index, expected: "table") }
        guard stack.ensureSpace(2) else { throw .argument(index, "stack overflow") }
        let table = stack.absolute(index)
        var i: Int64 = 1
        let elements = stack.listCount(table)
        let count = stack.rawLength(table) > elements ? elements + 1 : elements  // + 1: a hole's nil
        while i <= count {
            let elementType = stack.rawGet(table, i)
            if Element.read(from: stack, at: -1) == nil {
                // Of the right type yet refused (a nested list, an enum, a Codable table): its own reason.
                let reason = "\(elementType)" == Element.luaTypeName
                    ? "element [\(i)]: \(Element.conversionProblem(stack, at: -1))"
                    : "\(Element.luaTypeName) expected at [\(i)], got \(elementType)"
                stack.pop()
                throw .argument(index, reason)
            }
            stack.pop()
            i += 1
        }
        throw .argument(index, "stack overflow")
    }
}

extension Dictionary: LuaConvertible where Key: LuaConvertible, Value: LuaConvertible {
    /// A NaN or nil key (`[Double.nan: 1]`, `[nil: 1]` for optional keys) is left out and
    /// recorded: the host call or Swift function pushing the table fails (see `PushFailures`).
    public func push(on stack: LuaStack) {
        guard stack.ensureSpace(3) else {
            stack.pushNil()
            stack.recordPushFailure("stack overflow")
            return
        }
        stack.pushNewTable(recordCount: Int32(clamping: count))
        for (key, value) in self {
            key.push(on: stack)
            // lua_rawset raises for these keys: a longjmp through this frame.
            if let problem = stack.tableKeyProblem(at: -1) {
                stack.pop()
                stack.recordPushFailure(problem)
                continue
            }
            value.push(on: stack)
            stack.rawSet(-3)
        }
    }
    /// Every pair of the table (`next` order); nil if any key or value does not convert.
    public static func read(from stack: LuaStack, at index: Int32) -> [Key: Value]? {
        guard stack.type(at: index) == .table, stack.ensureSpace(3) else { return nil }
        let table = stack.absolute(index)
        var result: [Key: Value] = [:]
        stack.pushNil()
        while stack.next(table) {
            guard let key = Key.read(from: stack, at: -2), let value = Value.read(from: stack, at: -1) else {
                stack.pop(2)
                return nil
            }
            result[key] = value
            stack.pop()
        }
        return result
    }
    public static var luaTypeName: String { "table" }
    /// A table with a key or value that does not convert names which.
    public static func check(_ stack: LuaStack, at index: Int32) throws(LuaRaise) -> [Key: Value] {
        if let value = read(from: stack, at: index) { return value }
        guard stack.type(at: index) == .table else { throw .type(index, expected: "table") }
        guard stack.ensureSpace(3) else { throw .argument(index, "stack overflow") }
        let table = stack.absolute(index)
        stack.pushNil()
        while stack.next(table) {
            if Key.read(from: stack, at: -2) == nil {
                let found = stack.typeName(at: -2)
                let reason = found == Key.luaTypeName
                    ? "a key: \(Key.conversionProblem(stack, at: -2))"
                    : "\(Key.luaTypeName) key expected, got \(found)"
                stack.pop(2)
                throw .argument(index, reason)
            }
            if Value.read(from: stack, at: -1) == nil {
                let found = stack.typeName(at: -1)
                let reason = found == Value.luaTypeName
                    ? "a value: \(Value.conversionProblem(stack, at: -1))"
                    : "\(Value.luaTypeName) value expected, got \(found)"
                stack.pop(2)
                throw .argument(index, reason)
            }
            stack.pop()
        }
        throw .argument(index, "stack overflow")
    }
}
