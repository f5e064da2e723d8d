import CLua
import CLuaShim

/// Calling Lua functions from Swift with typed arguments and results.
extension LuaState {
    /// Calls the global function `function` (a dotted path such as `"string.rep"` follows fields,
    /// read raw; `"bk.NAME"` is the module's function even without a global `bk`) and returns all
    /// its results.
    @inlinable @discardableResult
    public func call<each A: LuaConvertible>(_ function: String, _ arguments: repeat each A) throws(LuaError) -> [LuaValue] {
        return try withHostCall { (s: LuaStack) throws(LuaError) -> [LuaValue] in
            let base = s.top
            try s.pushGlobal(path: function)
            try s.push(arguments: repeat each arguments)
            return try s.callTop(base: base)
        }
    }

    /// Calls the global function `function` and returns its first result as `R`
    /// (`try state.call("add", 1, 2, as: Int.self)`).
    @inlinable
    public func call<each A: LuaConvertible, R: LuaConvertible>(_ function: String, _ arguments: repeat each A,
                                                              as type: R.Type) throws(LuaError) -> R {
        return try withHostCall { (s: LuaStack) throws(LuaError) -> R in
            try s.pushGlobal(path: function)
            let count = try s.push(arguments: repeat each arguments)
            try s.call(arguments: count, results: 1)
            return try s.convert(at: -1, to: type, what: "result")
        }
    }
}

extension LuaRef {
    /// Calls the referenced function (or callable value) and returns all its results.
    @inlinable @discardableResult
    public func call<each A: LuaConvertible>(_ arguments: repeat each A) throws(LuaError) -> [LuaValue] {
        return try withHostCall { (s: LuaStack) throws(LuaError) -> [LuaValue] in
            let base = s.top
            push(on: s)
            try s.push(arguments: repeat each arguments)
            return try s.callTop(base: base)
        }
    }

    /// Calls the referenced function and returns its first result as `R`.
    @inlinable
    public func call<each A: LuaConvertible, R: LuaConvertible>(_ arguments: repeat each A,
                                                              as type: R.Type) throws(LuaError) -> R {
        return try withHostCall { (s: LuaStack) throws(LuaError) -> R in
            push(on: s)
            let count = try s.push(arguments: repeat each arguments)
            try s.call(arguments: count, results: 1)
            return try s.convert(at: -1, to: type, what: "result")
        }
    }

    /// The referenced value as `T`.
    public func get<T: LuaConvertible>(as type: T.Type) throws(LuaError) -> T {
        return try withHostCall { (s: LuaStack) throws(LuaError) -> T in
            push(on: s)
            return try s.convert(at: -1, to: type, what: "value")
        }
    }

    @usableFromInline static let closedError = LuaError(kind: .runtime, message: "the Lua state of this reference is closed")
}

extension LuaState {
    /// `activeStack` with room for a few values (the caller holds `lock`).
    @usableFromInline func checkedActiveStack() throws(LuaError) -> LuaStack {
        let s = activeStack
        guard s.ensureSpace(4) else { throw LuaError(kind: .memory, message: "stack overflow") }
        return s
    }
}

extension LuaStack {
    /// Pushes the value at a global path (`"name"` or `"a.b.c"`), raw reads only.
    @usableFromInline func pushGlobal(path: String) throws(LuaError) {
        guard ensureSpace(2) else { throw LuaError(kind: .memory, message: "stack overflow") }
        pushGlobalTable()
        if !path.utf8.contains(UInt8(ascii: ".")) {
            rawGet(-1, field: path)  // the common case: one global
            remove(at: -2)
        } else {
            var walked = ""
            for part in path.split(separator: ".", omittingEmptySubsequences: false) {
                guard type(at: -1) == .table else {
                    throw LuaError(kind: .runtime, message: "attempt to index a \(typeName(at: -1)) value ('\(walked)')")
                }
                rawGet(-1, field: String(part))
                remove(at: -2)
                if walked.isEmpty, part == "bk", type(at: -1) == .nil {
                    // `bk.NAME` works without the global `bk` (states that never installed globals).
                    pop()
                    BKModule.pushModule(on: self)
                }
                walked += walked.isEmpty ? String(part) : "." + part
            }
        }
        if type(at: -1) == .nil {
            throw LuaError(kind: .runtime, message: "attempt to call a nil value (global '\(path)')")
        }
    }

    /// Pushes every argument; returns how many. An argument that cannot go into Lua as it is (a
    /// NaN or nil table key, a `LuaRef` of another state) throws before anything is called.
    @inlinable @discardableResult
    func push<each A: LuaConvertible>(arguments: repeat each A) throws(LuaError) -> Int32 {
        var count: Int32 = 0
        for _ in repeat (each A).self { count += 1 }
        guard ensureSpace(count + 2) else { throw LuaError(kind: .runtime, message: "too many arguments") }
        var position = 0
        for argument in repeat each arguments {
            position += 1
            if Swift.type(of: argument).pushesAsIs {
                argument.push(on: self)
            } else if let failure = checkingPushes({ argument.push(on: self) }) {
                throw LuaError(kind: .runtime, message: "bad argument #\(position) (\(failure))")
            }
        }
        return count
    }

    /// Calls the function at `base + 1` with the arguments above it; returns every result.
    @usableFromInline func callTop(base: Int32) throws(LuaError) -> [LuaValue] {
        try call(arguments: top - base - 1, results: LUA_MULTRET)
        return (base + 1 ..< top + 1).map { value(at: $0) }
    }
}
