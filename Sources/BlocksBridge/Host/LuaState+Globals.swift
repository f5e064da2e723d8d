
/// Globals for hosts, raw (no metamethod of the global table runs), each on the `withHostCall`
/// frame: under the state's lock, on the calling coroutine's stack.
extension LuaState {
    /// Sets the global `name` to `value` (a bridged object, a function, an array, ...).
    /// - Throws: `LuaError` when `value` cannot go into Lua as it is (a dictionary with a NaN or
    ///   nil key, a `LuaRef` of another state); the global is then left unchanged.
    public func setGlobal(_ name: String, _ value: some LuaConvertible) throws(LuaError) {
        try setGlobal(name) { value.push(on: $0) }
    }

    /// Sets the global `name` to the one value `push` pushes.
    func setGlobal(_ name: String, pushing push: (LuaStack) -> Void) throws(LuaError) {
        try withHostCall { (s: LuaStack) throws(LuaError) in
            s.pushGlobalTable()
            if let failure = s.checkingPushes({ push(s) }) {
                throw LuaError(kind: .runtime, message: "cannot set global '\(name)' (\(failure))")
            }
            s.rawSet(-2, field: name)
        }
    }

    /// The global `name` as `T`; throws when it does not convert (a missing global is nil).
    public func global<T: LuaConvertible>(_ name: String, as type: T.Type) throws(LuaError) -> T {
        return try withHostCall { (s: LuaStack) throws(LuaError) -> T in
            s.pushGlobalTable()
            s.rawGet(-1, field: name)
            return try s.convert(at: -1, to: T.self, what: "global '\(name)'")
        }
    }

    /// Adds every `bk.NAME` as the global `bk_NAME`, and `bk` itself as a global.
    public func installGlobals() {
        // Fails only when the stack cannot grow by a few slots (no memory): nothing is installed.
        try? withHostCall { (s: LuaStack) throws(LuaError) in
            guard s.ensureSpace(6) else { throw LuaError(kind: .memory, message: "stack overflow") }
            BKModule.installGlobals(in: s)
        }
    }
}
