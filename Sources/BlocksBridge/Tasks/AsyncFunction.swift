import CLua
import CLuaShim

/// Lua function bodies for Swift `async` work: the body converts the arguments (in Lua, on the
/// caller's stack), starts the work as a `SwiftAsyncCall` and hands the wait to the tasks engine
/// once the Swift frame is gone (`continueWithCall`). So, called from a task, the call suspends
/// only that task until the work finishes (then the task resumes on the loop with its results, or
/// its error raised); called elsewhere it runs the loop until done; cancelling the awaiting task
/// cancels the Swift `Task`. `register`'s async closures and `@LuaExport`'s async members use it.
///
/// The work runs on another thread while Lua goes on, so what it captures crosses threads: its
/// arguments and result are `Sendable`, and so is a method's receiver.
enum AsyncFunction {
    /// The work once its arguments are read: runs off the state's thread, returns how to push its
    /// results (called on the loop's thread, holding the state).
    typealias Work = @Sendable () async throws -> @Sendable (LuaStack) -> Int32

    /// A function body calling `body` with its converted arguments; its result is the call's.
    static func make<each A: LuaConvertible & Sendable, R: LuaConvertible & Sendable>(
        _ body: @escaping @Sendable (repeat each A) async throws -> R
    ) -> BKFunctionBody {
        { stack throws(LuaRaise) in
            var index: Int32 = 0
            let arguments = (repeat try TypedFunction.argument((each A).self, stack, &index))
            return try start(on: stack) { pushing(try await body(repeat each arguments)) }
        }
    }

    /// A function body calling `body` with its converted arguments; the call returns nothing.
    static func make<each A: LuaConvertible & Sendable>(
        _ body: @escaping @Sendable (repeat each A) async throws -> Void
    ) -> BKFunctionBody {
        { stack throws(LuaRaise) in
            var index: Int32 = 0
            let arguments = (repeat try TypedFunction.argument((each A).self, stack, &index))
            return try start(on: stack) {
                try await body(repeat each arguments)
                return { _ in 0 }
            }
        }
    }

    /// A method body: argument 1 is the receiver, checked as `T` (which the work captures, so
    /// `T` is `Sendable`).
    static func method<T: LuaBridged & Sendable, each A: LuaConvertible & Sendable, R: LuaConvertible & Sendable>(
        _ body: @escaping @Sendable (T, repeat each A) async throws -> R
    ) -> BKFunctionBody {
        { stack throws(LuaRaise) in
            let receiver = try stack.checkObject(T.self, at: 1)
            var index: Int32 = 1
            let arguments = (repeat try TypedFunction.argument((each A).self, stack, &index))
            return try start(on: stack) { pushing(try await body(receiver, repeat each arguments)) }
        }
    }

    /// A method body returning nothing.
    static func method<T: LuaBridged & Sendable, each A: LuaConvertible & Sendable>(
        _ body: @escaping @Sendable (T, repeat each A) async throws -> Void
    ) -> BKFunctionBody {
        { stack throws(LuaRaise) in
            let receiver = try stack.checkObject(T.self, at: 1)
            var index: Int32 = 1
            let arguments = (repeat try TypedFunction.argument((each A).self, stack, &index))
            return try start(on: stack) {
                try await body(receiver, repeat each arguments)
                return { _ in 0 }
            }
        }
    }

    private static func pushing<R: LuaConvertible & Sendable>(_ result: R) -> @Sendable (LuaStack) -> Int32 {
        { stack in
            result.push(on: stack)
            return 1
        }
    }

    /// Starts `work` and returns the status that has the trampoline await it (a Lua call, which
    /// may yield the task) once the Swift frame is gone. Nothing starts when the engine cannot load.
    static func start(on stack: LuaStack, _ work: @escaping Work) throws(LuaRaise) -> Int32 {
        guard stack.ensureSpace(4) else { throw .message("stack overflow") }
        try pushAwaiter(on: stack)
        let call = SwiftAsyncCall(loop: stack.eventLoop)
        call.start(work)
        stack.push(newObject: call)
        return stack.continueWithCall(arguments: 1)
    }

    static let awaiterKey = "bk.swiftcall.await"

    /// Pushes `awaiter(call)`: awaits the call with the engine's `await`, cancelling the Swift work
    /// when the awaiting task is cancelled. Made once per state, on first use.
    private static func pushAwaiter(on stack: LuaStack) throws(LuaRaise) {
        if stack.rawGet(LuaStack.registryIndex, field: awaiterKey) == .function { return }
        stack.pop()
        let base = stack.top
        let handler = stack.pushMessageHandler()
        do throws(LuaError) {
            try stack.load(awaiterSource, name: "=bk/async-function")
        } catch {
            stack.top = base
            throw .message(error.message)
        }
        do throws(LuaRaise) {
            try TaskEngine.pushFunctions(on: stack)
        } catch {
            stack.top = base
            throw error
        }
        stack.rawGet(LuaStack.registryIndex, field: TaskEngine.cancelledKey)
        guard stack.protectedCall(arguments: 2, results: 1, handler: handler) == LUA_OK else {
            let message = stack.toString(-1) ?? "?"
            stack.top = base
            throw .message(message)
        }
        stack.remove(at: handler)
        stack.pushCopy(of: -1)
        stack.rawSet(LuaStack.registryIndex, field: awaiterKey)
    }

    private static let awaiterSource = """
        local tasks, cancelled = ...
        local await, pcall, error, rawequal = tasks.await, pcall, error, rawequal
        local function finish(call, ok, ...)
          if ok then return ... end
          local err = ...
          if rawequal(err, cancelled) then call:cancel() end
          error(err, 0)
        end
        return function(call)
          return finish(call, pcall(await, call))
        end
        """
}
