import CLua
import CLuaShim

/// Calling Lua functions from Swift with typed arguments and results.
extension LuaState {
    /// Calls the global function `function` (a dotted path such as `"string.rep"` follows fields,
    /// read raw; `"bk.NAME"` is the module's function even without a global `bk`) and returns all
    /// its results.
    @discardableResult
    public func call(_ function: String, _ arguments: any LuaConvertible...) throws(LuaError) -> [LuaValue] {
        let s = activeStack
        let base = s.top
        defer { s.top = base }
        try s.pushGlobal(path: function)
        return try s.callTop(arguments: arguments)
    }

    /// Calls the global function `function` and returns its first result as `R`
    /// (`try state.call("add", 1, 2, as: Int.self)`).
    public func call<R: LuaConvertible>(_ function: String, _ arguments: any LuaConvertible...,
                                        as type: R.Type) throws(LuaError) -> R {
        let s = activeStack
        let base = s.top
        defer { s.top = base }
        try s.pushGlobal(path: function)
        return try s.callTop(arguments: arguments, as: type)
    }
}

extension LuaRef {
    /// Calls the referenced function (or callable value) and returns all its results.
    @discardableResult
    public func call(_ arguments: any LuaConvertible...) throws(LuaError) -> [LuaValue] {
        let s = try liveStack()
        let base = s.top
        defer { s.top = base }
        push(on: s)
        return try s.callTop(arguments: arguments)
    }

    /// Calls the referenced function and returns its first result as `R`.
    public func call<R: LuaConvertible>(_ arguments: any LuaConvertible..., as type: R.Type) throws(LuaError) -> R {
        let s = try liveStack()
        let base = s.top
        defer { s.top = base }
        push(on: s)
        return try s.callTop(arguments: arguments, as: type)
    }

    /// The referenced value as `T`.
    public func get<T: LuaConvertible>(as type: T.Type) throws(LuaError) -> T {
        let s = try liveStack()
        let base = s.top
        defer { s.top = base }
        push(on: s)
        return try s.convert(at: -1, to: type, what: "value")
    }

    private func liveStack() throws(LuaError) -> LuaStack {
        guard let state else { throw LuaError(kind: .runtime, message: "the Lua state of this reference is closed") }
        let s = state.activeStack
        guard s.ensureSpace(2) else { throw LuaError(kind: .memory, message: "stack overflow") }
        return s
    }
}

extension LuaStack {
    /// Pushes the value at a global path (`"name"` or `"a.b.c"`), raw reads only.
    func pushGlobal(path: String) throws(LuaError) {
        guard ensureSpace(2) else { throw LuaError(kind: .memory, message: "stack overflow") }
        pushGlobalTable()
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
        if type(at: -1) == .nil {
            throw LuaError(kind: .runtime, message: "attempt to call a nil value (global '\(path)')")
        }
    }

    /// Calls the function on top with `arguments`; returns every result (the stack is restored
    /// by the caller).
    func callTop(arguments: [any LuaConvertible]) throws(LuaError) -> [LuaValue] {
        let function = top
        try push(arguments: arguments)
        try call(arguments: Int32(arguments.count), results: LUA_MULTRET)
        return (function ..< top + 1).map { value(at: $0) }
    }

    /// Calls the function on top with `arguments`; returns its first result as `R`.
    func callTop<R: LuaConvertible>(arguments: [any LuaConvertible], as type: R.Type) throws(LuaError) -> R {
        try push(arguments: arguments)
        try call(arguments: Int32(arguments.count), results: 1)
        return try convert(at: -1, to: type, what: "result")
    }

    private func push(arguments: [any LuaConvertible]) throws(LuaError) {
        guard ensureSpace(Int32(clamping: arguments.count) + 2) else {
            throw LuaError(kind: .runtime, message: "too many arguments")
        }
        for argument in arguments { argument.push(on: self) }
    }
}
