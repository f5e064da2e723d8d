
/// Fields and methods of a referenced value, with Lua's full semantics (`__index` and friends run,
/// inside a protected call, so their errors come back as `LuaError`).
extension LuaRef {
    /// `LuaState.withHostCall` on the referenced value's state; throws once that state is closed.
    @inlinable
    func withHostCall<R>(_ body: (LuaStack) throws(LuaError) -> R) throws(LuaError) -> R {
        guard let state else { throw LuaRef.closedError }
        return try state.withHostCall(body)
    }

    /// `value[name]` as `T`.
    public func field<T: LuaConvertible>(_ name: String, as type: T.Type) throws(LuaError) -> T {
        return try withHostCall { (s: LuaStack) throws(LuaError) -> T in
            try s.pushHostHelper(.index)
            push(on: s)
            s.push(name)
            try s.call(arguments: 2, results: 1)
            return try s.convert(at: -1, to: type, what: "field '\(name)'")
        }
    }

    /// `value[name] = newValue`.
    public func setField(_ name: String, _ newValue: some LuaConvertible) throws(LuaError) {
        try withHostCall { (s: LuaStack) throws(LuaError) in
            guard s.ensureSpace(4) else { throw LuaError(kind: .memory, message: "stack overflow") }
            try s.pushHostHelper(.newIndex)
            push(on: s)
            s.push(name)
            if let failure = s.checkingPushes({ newValue.push(on: s) }) {
                throw LuaError(kind: .runtime, message: "cannot set field '\(name)' (\(failure))")
            }
            try s.call(arguments: 3, results: 0)
        }
    }

    /// `value:name(arguments...)`, returning the first result as `R`.
    public func callMethod<each A: LuaConvertible, R: LuaConvertible>(
        _ name: String, _ arguments: repeat each A, as type: R.Type
    ) throws(LuaError) -> R {
        return try withHostCall { (s: LuaStack) throws(LuaError) -> R in
            try s.pushHostHelper(.callMethod)
            push(on: s)
            s.push(name)
            let count = try s.push(arguments: repeat each arguments)
            try s.call(arguments: count + 2, results: 1)
            return try s.convert(at: -1, to: type, what: "result")
        }
    }

    /// `value:name(arguments...)`, returning all results.
    @discardableResult
    public func callMethod<each A: LuaConvertible>(_ name: String, _ arguments: repeat each A) throws(LuaError) -> [LuaValue] {
        return try withHostCall { (s: LuaStack) throws(LuaError) -> [LuaValue] in
            let base = s.top
            try s.pushHostHelper(.callMethod)
            push(on: s)
            s.push(name)
            try s.push(arguments: repeat each arguments)
            return try s.callTop(base: base)
        }
    }
}

/// Small Lua functions the host API calls for operations that may run metamethods: running them
/// as Lua keeps every metamethod inside a protected call.
enum HostHelper: String {
    case index = "local t, k = ...; return t[k]"
    case newIndex = "local t, k, v = ...; t[k] = v"
    case callMethod = "local t, k = ...; return t[k](t, select(3, ...))"
}

extension LuaStack {
    /// Pushes the helper, compiled once per state and kept in the registry.
    func pushHostHelper(_ helper: HostHelper) throws(LuaError) {
        guard ensureSpace(3) else { throw LuaError(kind: .memory, message: "stack overflow") }
        pushRegistryTable("bk.hostHelpers")
        if rawGet(-1, field: helper.rawValue) != .function {
            pop()
            try load(helper.rawValue, name: "=(host)")
            pushCopy(of: -1)
            rawSet(-3, field: helper.rawValue)
        }
        remove(at: -2)
    }
}
