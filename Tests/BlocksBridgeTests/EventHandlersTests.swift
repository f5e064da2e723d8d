import Testing
@testable import BlocksBridge

/// The Swift side of event handlers. (The Lua side is Tests/lua/test_event_handlers.lua, and
/// handlers that suspend their task are in Tests/lua/test_tasks.lua.)
@Suite struct EventHandlersTests {
    /// Handlers are called from Lua (`EventDispatch.lua`, which needs `xpcall`); without the base
    /// library they are called from Swift, with the same results.
    @Test func withoutTheBaseLibraryHandlersStillRun() throws {
        let state = try LuaState(standardLibraries: false)
        let stack = state.stack
        let calls = Locked<[Int]>([])
        BKModule.pushModule(on: stack)
        let module = stack.top
        stack.pushNewTable()
        let button = stack.top
        for i in 1 ... 2 {
            stack.rawGet(module, field: "addEventHandler")
            stack.pushCopy(of: button)
            LuaClosure { (_: LuaValue, n: Int) in calls.withLock { $0.append(i * n) } }.push(on: stack)
            stack.push("tap")
            try stack.call(arguments: 3, results: 0)
        }
        stack.rawGet(module, field: "sendActionsForControlEvents")
        stack.pushCopy(of: button)
        stack.push("tap")
        stack.push(Int64(10))
        try stack.call(arguments: 3, results: 1)
        #expect(stack.toInteger(-1) == 2)
        #expect(calls.withLock { $0 } == [10, 20])
        #expect(stack.rawGet(LuaStack.registryIndex, field: EventDispatch.registryKey) == .nil)
        stack.top = 0
    }
}
