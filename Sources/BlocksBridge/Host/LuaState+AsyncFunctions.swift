import CLua
import CLuaShim

/// Swift `async` closures as Lua functions: called from a task they suspend it until the Swift
/// work finishes (then it resumes on the loop, the work's error raised in it); called elsewhere
/// they run the loop until it is done. Cancelling the Lua task cancels the Swift `Task`.
extension LuaState {
    /// Registers an `async` Swift closure as the global function `name`:
    /// `state.register("fetch") { (url: String) async throws -> String in ... }`.
    public func register<each A: LuaConvertible & Sendable, R: LuaConvertible & Sendable>(
        _ name: String, _ body: @escaping @Sendable (repeat each A) async throws -> R
    ) {
        registerAsync(name) { stack throws(LuaRaise) -> @Sendable () async throws -> @Sendable (LuaStack) -> Int32 in
            var index: Int32 = 0
            let arguments = (repeat try TypedFunction.argument((each A).self, stack, &index))
            return {
                let result = try await body(repeat each arguments)
                return { stack in
                    result.push(on: stack)
                    return 1
                }
            }
        }
    }

    /// Registers an `async` Swift closure returning nothing as the global function `name`.
    public func register<each A: LuaConvertible & Sendable>(
        _ name: String, _ body: @escaping @Sendable (repeat each A) async throws -> Void
    ) {
        registerAsync(name) { stack throws(LuaRaise) -> @Sendable () async throws -> @Sendable (LuaStack) -> Int32 in
            var index: Int32 = 0
            let arguments = (repeat try TypedFunction.argument((each A).self, stack, &index))
            return {
                try await body(repeat each arguments)
                return { _ in 0 }
            }
        }
    }

    /// `prepare` converts the arguments (in Lua, on the caller's stack) and returns the work.
    private func registerAsync(
        _ name: String,
        _ prepare: @escaping (LuaStack) throws(LuaRaise) -> @Sendable () async throws -> @Sendable (LuaStack) -> Int32
    ) {
        let start: LuaFunction = { stack throws(LuaRaise) in
            let work = try prepare(stack)
            let call = SwiftAsyncCall(loop: stack.eventLoop)
            call.start(work)
            stack.push(newObject: call)
            return 1
        }
        try? setGlobal(name) { stack in
            // The Lua wrapper awaits the call (a Lua function, so the await can yield the task).
            let base = stack.top
            let handler = stack.pushMessageHandler()
            do throws(LuaError) {
                try stack.load(AsyncFunctionWrapper.source, name: "=bk/async-function")
            } catch {
                stack.top = base
                stack.pushNil()
                return
            }
            stack.push(function: name, start)
            do throws(LuaRaise) {
                try TaskEngine.pushFunctions(on: stack)
            } catch {
                stack.top = base
                stack.pushNil()
                return
            }
            stack.rawGet(LuaStack.registryIndex, field: TaskEngine.cancelledKey)
            if stack.protectedCall(arguments: 3, results: 1, handler: handler) != LUA_OK {
                stack.top = base
                stack.pushNil()
                return
            }
            stack.remove(at: handler)
        }
    }
}

enum AsyncFunctionWrapper {
    /// `start(...)` begins the Swift work and returns its call object; the wrapper awaits it and,
    /// when the awaiting task is cancelled, cancels the Swift work too.
    static let source = """
        local start, tasks, cancelled = ...
        local await, pcall, error, rawequal = tasks.await, pcall, error, rawequal
        local function finish(call, ok, ...)
          if ok then return ... end
          local err = ...
          if rawequal(err, cancelled) then call:cancel() end
          error(err, 0)
        end
        return function(...)
          local call = start(...)
          return finish(call, pcall(await, call))
        end
        """
}
