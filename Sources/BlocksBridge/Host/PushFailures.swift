
/// Swift values that cannot go into Lua as they are: a table key that is NaN or nil (`lua_rawset`
/// would raise, a longjmp through Swift), a `LuaRef` of another or a closed state.
///
/// `LuaConvertible.push(on:)` cannot throw, so such a push leaves the bad part out (the pair is
/// skipped, nil stands for the reference) and records why here. The code that pushed reports it:
/// host entry points throw `LuaError`, Swift functions called from Lua raise a Lua error (both
/// through `LuaStack.checkingPushes`). Touched only with the state's lock held, as every push is.
final class PushFailures {
    /// `checkingPushes` calls running: a failure outside any is only left out.
    fileprivate var depth = 0
    /// The first failure recorded since the innermost `checkingPushes` began.
    fileprivate var first: String?
}

extension LuaStack {
    /// Runs `push` and returns the first failure it recorded (nil: everything was pushed as is).
    @usableFromInline func checkingPushes(_ push: () -> Void) -> String? {
        let failures = state.pushFailures
        let outer = failures.first
        failures.first = nil
        failures.depth += 1
        push()
        failures.depth -= 1
        let found = failures.first
        failures.first = outer
        return found
    }

    /// Records that a value was not pushed as it is (see `PushFailures`).
    func recordPushFailure(_ message: String) {
        let failures = state.pushFailures
        if failures.depth > 0, failures.first == nil { failures.first = message }
    }

    /// Why the value at `index` cannot be a table key, or nil when it can (`lua_rawset` raises
    /// "index is nil" / "index is NaN" for these two).
    func tableKeyProblem(at index: Int32) -> String? {
        switch type(at: index) {
        case .nil, .none: return "table index is nil"
        case .number where !isInteger(index) && (toNumber(index)?.isNaN ?? false): return "table index is NaN"
        default: return nil
        }
    }

    /// Pushes a value a Swift function returns to Lua; raises when it cannot go into Lua as it is
    /// (`what`: "result", "field 'name'").
    @inlinable func push<V: LuaConvertible>(returned value: V, what: String) throws(LuaRaise) {
        if V.pushesAsIs { return value.push(on: self) }
        if let failure = checkingPushes({ value.push(on: self) }) {
            throw .message("bad \(what) (\(failure))")
        }
    }
}
