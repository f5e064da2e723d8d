/// The Swift side of a dynamic delegate: a Swift object that implements a Swift delegate protocol
/// by calling the methods of a Lua dynamic delegate (block, else real delegate, else default).
///
/// Made for one synchronous run (a parse, a load, ...) inside an exported function: the delegate
/// and the delegating object's userdata sit on the Lua stack for that long. The first failing call
/// is kept (`pendingError`), `onError` runs (so the Swift side can abort), later calls are skipped,
/// and the exported function raises the error once the Swift framework has returned
/// (`raisePendingError`): no Lua error ever unwinds through the framework's frames.
public final class DelegateForwarder {
    let stack: LuaStack
    /// Absolute stack indices of the delegating object (passed as first argument), the dynamic
    /// delegate and the message handler.
    let object: Int32
    let delegate: Int32
    let handler: Int32
    private let meta: Int32
    private let proto: DelegateProtocol
    private var pendingError: LuaRef?
    public var onError: () -> Void = {}

    /// Pushes the dynamic delegate of the object at `object` for `proto`, a message handler and
    /// the delegate's metatable (three values the forwarder uses until the run ends).
    public init(stack: LuaStack, object: Int32, protocol proto: DelegateProtocol) throws(LuaRaise) {
        self.stack = stack
        self.object = stack.absolute(object)
        self.proto = proto
        try DynamicDelegateStore.pushDelegate(stack, object: object, protocol: proto)
        delegate = stack.top
        _ = stack.pushMetatable(of: delegate)
        meta = stack.top
        handler = stack.pushMessageHandler()
    }

    public var failed: Bool { pendingError != nil }

    /// Calls `dd:method(object, ...)`: `arguments` pushes the arguments after the object and returns
    /// their count; `result` reads the answer (at index -1). Nothing happens after a failure.
    public func call(_ method: String, arguments: (LuaStack) -> Int32 = { _ in 0 },
                     result: (LuaStack) -> Void = { _ in }) {
        guard pendingError == nil, let (name, spec) = proto.method(method) else { return }
        stack.withRestoredTop {
            guard stack.ensureSpace(24) else {
                fail(message: "stack overflow (delegate method '\(name)')")
                return
            }
            do throws(LuaRaise) {
                try DynamicDelegateStore.pushDispatcher(stack, delegate: delegate, meta: meta, key: name,
                                                        name: name, method: spec)
            } catch .valueOnTop {
                fail()
                return
            } catch {
                fail(message: "delegate method '\(name)' is unavailable")
                return
            }
            stack.pushCopy(of: delegate)
            stack.pushCopy(of: object)
            let count = arguments(stack)
            if stack.protectedCall(arguments: count + 2, results: 1, handler: handler) != 0 {
                fail()
                return
            }
            result(stack)
        }
    }

    /// Keeps the error value on top (with its traceback) and lets the Swift side abort.
    private func fail() {
        pendingError = LuaRef(popping: stack)
        onError()
    }

    private func fail(message: String) {
        stack.push(message)
        fail()
    }

    /// Raises the kept error, if any (call once the Swift framework has returned).
    public func raisePendingError() throws(LuaRaise) {
        guard let error = pendingError else { return }
        pendingError = nil
        error.push(on: stack)
        throw .valueOnTop
    }
}
