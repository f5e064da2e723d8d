import CLua
import CLuaShim

/// The body of a Swift function exported to Lua: reads its arguments from the stack, pushes its
/// results and returns how many; throws `LuaRaise` to raise a Lua error (raised by the trampoline).
/// The bridge's own helpers may instead return a `TrampolineStatus` code that continues in C
/// (`continueWithCall`, `continueWithWalk`).
public typealias LuaFunction = (LuaStack) throws(LuaRaise) -> Int32

/// The Swift half of an exported function, retained by the Lua userdata upvalue of its closure.
final class ExportedFunction {
    let body: LuaFunction
    init(_ body: @escaping LuaFunction) { self.body = body }
}

@_cdecl("bk_swift_call")
func callExportedFunction(_ L: OpaquePointer?, _ body: UnsafeMutableRawPointer?,
                          _ runtime: UnsafeMutablePointer<bk_runtime>?) -> Int32 {
    guard let L, let body, let runtime else { return TrampolineStatus.raiseValue.code }
    let stack = LuaStack(L, runtime)
    // The Lua userdata keeps the box alive for the whole call: no retain/release on this path.
    let result: Result<Int32, LuaRaise> = Unmanaged<ExportedFunction>.fromOpaque(body)
        ._withUnsafeGuaranteedRef { function in
            do throws(LuaRaise) { return .success(try function.body(stack)) } catch { return .failure(error) }
        }
    switch result {
    case .success(let count): return count
    case .failure(let error): return stack.prepareRaise(error).code
    }
}

@_cdecl("bk_swift_release")
func releaseExportedFunction(_ body: UnsafeMutableRawPointer?) {
    guard let body else { return }
    Unmanaged<ExportedFunction>.fromOpaque(body).release()
}

extension LuaStack {
    /// Pushes a Lua function that runs `body`. `name` is the name argument errors use.
    /// `runsAtClose`: it may run while the state closes (finalizers); others raise then.
    public func push(function name: String, runsAtClose: Bool = false, _ body: @escaping LuaFunction) {
        let box = Unmanaged.passRetained(ExportedFunction(body)).toOpaque()
        bk_pushswiftfunction(L, runtime, box, name, runsAtClose ? BK_FUNCTION_AT_CLOSE : 0)
    }

    /// Lays out on the stack what the trampoline needs to raise `error`; returns the status.
    func prepareRaise(_ error: LuaRaise) -> TrampolineStatus {
        _ = ensureSpace(4)
        switch error {
        case .valueOnTop:
            if top == 0 { pushNil() }
            return .raiseValue
        case .message(let message):
            push(message)
            return .raiseMessage
        case .argument(let index, let message):
            push(Int64(index))
            push(message)
            return .raiseArgument
        case .type(let index, let expected):
            push(Int64(top))
            push(Int64(index))
            push(expected)
            return .raiseType
        }
    }
}

extension LuaStack {
    /// Returns the status that has the trampoline call the Lua function below the top `arguments`
    /// values once this Swift frame is gone (`BK_CONTINUE_CALL`), returning all its results as the
    /// exported function's own. The call may yield when the caller can: how a bk function hands a
    /// wait over to the tasks engine, so that the task suspends instead of the loop nesting.
    func continueWithCall(arguments: Int32) -> Int32 {
        push(Int64(arguments))
        return TrampolineStatus.continueCall.code
    }
}
