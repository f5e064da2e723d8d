import Testing
import Foundation
import CLua
import CLuaShim
@testable import BlocksBridge

// Lua's LUA_MASK* macros, which Swift does not import.
private let maskCall: Int32 = 1 << LUA_HOOKCALL
private let maskReturn: Int32 = 1 << LUA_HOOKRET
private let maskCount: Int32 = 1 << LUA_HOOKCOUNT

/// What a test client of the hub saw: events by kind, counted from the Lua thread.
private final class HookEvents: @unchecked Sendable {
    var calls = 0
    var counts = 0
    var threads = Set<UnsafeMutableRawPointer>()
}

/// A hub client that counts the events it gets (a C function pointer, as the profiler and the
/// debugger attach theirs).
private let countingClient: bk_hook_fn = { L, ar, context in
    guard let L, let ar, let context else { return }
    let events = Unmanaged<HookEvents>.fromOpaque(context).takeUnretainedValue()
    if ar.pointee.event == LUA_HOOKCOUNT { events.counts += 1 } else if ar.pointee.event == LUA_HOOKCALL { events.calls += 1 }
    events.threads.insert(UnsafeMutableRawPointer(L))
}

/// The hook hub (Hook.c): no hook unless someone needs one, clients on every thread, pokes.
@Suite struct HookHubTests {
    @Test func aStateWithoutLimitsOrClientsRunsWithoutAHook() throws {
        let state = try scriptingState()
        try state.run("""
            local co = coroutine.wrap(function() for i = 1, 3 do coroutine.yield(i) end end)
            co() co()
            debug.sethook(function() end, "c") debug.sethook()
            """)
        #expect(lua_gethook(state.stack.L) == nil)
        // A sandbox's state has one (its limits), and keeps it under a script's own hook.
        let sandboxed = try LuaState(sandbox: Sandbox(timeLimit: .seconds(20)))
        #expect(lua_gethook(sandboxed.stack.L) != nil)
        #expect(lua_gethookmask(sandboxed.stack.L) & maskCount != 0)
    }

    @Test func aClientGetsItsEventsOnEveryThreadUntilDetached() throws {
        let state = try scriptingState()
        let events = HookEvents()
        let context = Unmanaged.passRetained(events)
        defer { context.release() }
        // A coroutine made before the client attached gets the hub when it is next resumed.
        try state.run("""
            local function f() end
            early = coroutine.create(function() coroutine.yield() for i = 1, 10 do f() end end)
            coroutine.resume(early)
            """)
        bk_hook_attach(state.stack.L, Int32(BK_HOOK_PROFILER.rawValue), countingClient, context.toOpaque(), maskCall, 0)
        try state.run("coroutine.resume(early)")
        #expect(events.calls >= 10, "\(events.calls) call events")
        #expect(events.threads.count >= 2, "events on \(events.threads.count) threads")
        bk_hook_detach(state.stack.L, Int32(BK_HOOK_PROFILER.rawValue))
        #expect(lua_gethook(state.stack.L) == nil)
        let before = events.calls
        try state.run("local function g() end for i = 1, 10 do g() end")
        #expect(events.calls == before)
    }

    @Test func aCoroutineMadeBeforeAClientAttachedGetsItsEventsWhenSwiftResumesIt() throws {
        // bk_resume (Swift's resume) prepares the coroutine as the hub's coroutine.resume does.
        let state = try scriptingState()
        let events = HookEvents()
        let context = Unmanaged.passRetained(events)
        defer { context.release() }
        try state.run("early = coroutine.create(function() local function f() end for i = 1, 10 do f() end end)")
        bk_hook_attach(state.stack.L, Int32(BK_HOOK_PROFILER.rawValue), countingClient, context.toOpaque(), maskCall, 0)
        defer { bk_hook_detach(state.stack.L, Int32(BK_HOOK_PROFILER.rawValue)) }
        let L = state.stack.L
        let top = lua_gettop(L)
        lua_rawgeti(L, LuaStack.registryIndex, lua_Integer(LUA_RIDX_GLOBALS))
        lua_pushstring(L, "early")
        lua_rawget(L, -2)
        let co = lua_tothread(L, -1)
        #expect(co != nil)
        var results: Int32 = 0
        if let co { #expect(bk_resume(co, L, 0, &results) == LUA_OK) }
        lua_settop(L, top)
        #expect(events.calls >= 10, "\(events.calls) call events in a coroutine resumed by Swift")
    }

    @Test func aPokeFromAnotherThreadReachesTheRunningCoroutine() throws {
        let state = try LuaState(sandbox: Sandbox(timeLimit: .seconds(30), safeLibraries: false))
        let events = HookEvents()
        let context = Unmanaged.passRetained(events)
        defer { context.release() }
        // The client asks for no count events: only pokes bring them.
        bk_hook_attach(state.stack.L, Int32(BK_HOOK_PROFILER.rawValue), countingClient, context.toOpaque(), maskReturn, 0)
        let runtime = state.runtimeStorage
        let handle = state.interruptHandle
        let poker = Thread {
            Thread.sleep(forTimeInterval: 0.1)
            for _ in 0..<5 {
                bk_hook_poke(runtime.pointer)
                Thread.sleep(forTimeInterval: 0.02)
            }
            Thread.sleep(forTimeInterval: 0.1)
            handle.interrupt()
        }
        poker.start()
        #expect(throws: LuaError.self) {
            try state.run("coroutine.wrap(function() while true do end end)()")
        }
        #expect(events.counts >= 1, "no count event after five pokes")
        #expect(events.counts <= 6, "\(events.counts) count events for five pokes (and the interrupt)")
        bk_hook_detach(state.stack.L, Int32(BK_HOOK_PROFILER.rawValue))
    }
}
