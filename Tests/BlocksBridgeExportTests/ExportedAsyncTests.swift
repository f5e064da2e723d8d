import Synchronization
import Testing
import BlocksBridgeExport

struct FetchFailure: Error, CustomStringConvertible {
    let code: Int
    var description: String { "fetch failed with \(code)" }
}

/// Async members: the object crosses to the work's thread, so the class is `@unchecked Sendable`
/// (its only state is a constant and a Mutex).
@LuaExport
final class Fetcher: LuaExportable, @unchecked Sendable {
    let prefix: String
    @LuaIgnore let cancellations = Mutex(0)
    init(prefix: String) { self.prefix = prefix }
    @LuaName("connect") init(host: String) async throws {
        try await Task.sleep(for: .milliseconds(5))
        prefix = host + "/"
    }
    func fetch(_ name: String, delay milliseconds: Int = 20) async throws -> String {
        try await Task.sleep(for: .milliseconds(milliseconds))
        return prefix + name
    }
    func fail(_ code: Int) async throws -> Int {
        try await Task.sleep(for: .milliseconds(5))
        throw FetchFailure(code: code)
    }
    func reject() async throws -> Int { throw LuaRaise.message("rejected") }
    func hang() async throws {
        do { try await Task.sleep(for: .seconds(30)) } catch {
            cancellations.withLock { $0 += 1 }
            throw error
        }
    }
    func callAsFunction(_ n: Int) async -> Int { n * 2 }
    static func version() async -> String { "v1" }
    var cancelled: Int { cancellations.withLock { $0 } }
}

@Suite struct ExportedAsyncTests {
    private func state() throws -> LuaState {
        let lua = try LuaState()
        try lua.register(Fetcher.self)
        return lua
    }

    @Test func anAsyncMethodSuspendsOnlyTheCallingTask() throws {
        let lua = try state()
        let log = try lua.run("""
            local bk = require "bk"
            local f, log = Fetcher("f:"), {}
            local a = bk.async(function() local got = f:fetch("a", 100) log[#log + 1] = got end)
            local ticker = bk.async(function() bk.sleep(0.001) log[#log + 1] = "tick" end)
            bk.await(a)
            bk.await(ticker)
            return table.concat(log, ",")
            """, as: String.self)
        #expect(log == "tick,f:a")
    }

    @Test func outsideATaskItRunsTheLoopUntilDone() throws {
        let lua = try state()
        // The main chunk is not a task: the call waits for the Swift work, running the loop.
        #expect(try lua.run("return Fetcher('x:'):fetch('main')", as: String.self) == "x:main")
        #expect(try lua.run("return Fetcher('x:')(21)", as: Int.self) == 42)
        #expect(try lua.run("return Fetcher.version()", as: String.self) == "v1")
        #expect(try lua.run("return Fetcher.connect('host'):fetch('p', 0)", as: String.self) == "host/p")
    }

    @Test func theSwiftErrorIsRaisedInTheTask() throws {
        let lua = try state()
        let message = try lua.run("""
            local bk = require "bk"
            local f = Fetcher("")
            local t = bk.async(function() return pcall(f.fail, f, 7) end)
            local ok, err = bk.await(t)
            assert(not ok)
            return err
            """, as: String.self)
        #expect(message == "fetch failed with 7")
        // A LuaRaise thrown by the work is raised with its message.
        #expect(luaError(lua, "Fetcher(''):reject()") == "rejected")
    }

    @Test func badArgumentsAndBadSelfAreRaisedAtOnce() throws {
        let lua = try state()
        #expect(luaError(lua, "Fetcher('x'):fetch(1, 'slow')")
                == "t:1: bad argument #2 to 'fetch' (number expected, got string)")
        #expect(luaError(lua, "local f = Fetcher('x'); f.fetch({}, 'a')")
                == "t:1: bad argument #1 to 'fetch' (Fetcher expected, got table)")
    }

    @Test func cancellingTheLuaTaskCancelsTheSwiftWork() throws {
        let lua = try state()
        let fetcher = Fetcher(prefix: "")
        try lua.setGlobal("f", fetcher)
        let cancelled = try lua.run("""
            local bk = require "bk"
            local t = bk.async(function() f:hang() end)
            bk.sleep(0.02)
            t:cancel()
            bk.run()  -- the Swift call keeps the loop alive until it has ended
            return t.isCancelled and t.isFinished
            """, as: Bool.self)
        #expect(cancelled)
        #expect(fetcher.cancelled == 1)
    }
}

/// A subclass's async members: it restates its superclass's `@unchecked Sendable`.
@LuaExport
class Source: LuaExportable, @unchecked Sendable {
    init() {}
    func read() async -> String { "source" }
}

@LuaExport
final class FileSource: Source, @unchecked Sendable {
    override init() { super.init() }
    func size() async -> Int { 3 }
}

@Suite struct ExportedAsyncSubclassTests {
    @Test func aSubclassHasItsOwnAndItsSuperclassAsyncMethods() throws {
        let lua = try LuaState()
        try lua.register(FileSource.self)
        #expect(try lua.run("local s = FileSource() return s:read() .. s:size()", as: String.self) == "source3")
    }
}
