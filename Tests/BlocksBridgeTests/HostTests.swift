import Testing
import CLua
import CLuaShim
@testable import BlocksBridge

/// A Swift class exposed to Lua with typed methods and key-path properties.
private final class Counter: LuaBridged, LuaConvertible {
    var count = 0
    let name: String
    init(name: String) { self.name = name }

    static let luaClass = LuaClass(
        name: "Counter",
        methods: [
            .method("increment") { (counter: Counter, by: Int?) in
                counter.count += by ?? 1
                return counter.count
            },
            .method("reset") { (counter: Counter) in counter.count = 0 },
        ],
        properties: [.readWrite("count", \Counter.count), .readOnly("name", \Counter.name)]
    )
}

private struct SwiftFailure: Error, CustomStringConvertible {
    var description: String { "the Swift side failed" }
}

@Suite struct HostTests {
    // MARK: Typed run

    @Test func runReturnsTypedValues() throws {
        let state = try LuaState()
        #expect(try state.run("return 1 + 1", as: Int.self) == 2)
        #expect(try state.run("return 7 / 2", as: Double.self) == 3.5)
        #expect(try state.run("return 'a' .. 'b'", as: String.self) == "ab")
        #expect(try state.run("return 1 < 2", as: Bool.self) == true)
        #expect(try state.run("return {10, 20, 30}", as: [Int].self) == [10, 20, 30])
        #expect(try state.run("return {a = 1, b = 2}", as: [String: Int].self) == ["a": 1, "b": 2])
        #expect(try state.run("return {{1}, {2, 3}}", as: [[Int]].self) == [[1], [2, 3]])
        #expect(try state.run("return nil", as: Int?.self) == nil)
        #expect(try state.run("return 5", as: Int?.self) == 5)
        #expect(try state.run("local x = 1", as: String?.self) == nil)  // no result reads as nil
        guard case .string("x") = try state.run("return 'x'", as: LuaValue.self) else {
            Issue.record("expected a string value")
            return
        }
    }

    @Test func resultThatDoesNotConvertThrows() throws {
        let state = try LuaState()
        let error = #expect(throws: LuaError.self) { try state.run("return 'ten'", as: Int.self) }
        #expect(error?.message == "cannot convert result to Int (number expected, got string)")
        let listError = #expect(throws: LuaError.self) { try state.run("return {1, 'two'}", as: [Int].self) }
        #expect(listError?.message == "cannot convert result to Array<Int> (table expected, got table)")
        #expect(throws: LuaError.self) { try state.run("return 1.5", as: Int.self) }
        #expect(throws: LuaError.self) { try state.run("return 1", as: Bool.self) }
        #expect(state.stack.top == 0)
    }

    @Test func runtimeErrorsThrowMessageAndTraceback() throws {
        let state = try LuaState()
        let error = #expect(throws: LuaError.self) {
            try state.run("""
            local function inner() error("boom") end
            local function outer() inner() end
            outer()
            return 1
            """, name: "=script", as: Int.self)
        }
        #expect(error?.kind == .runtime)
        #expect(error?.message == "script:1: boom")
        #expect(error?.traceback.hasPrefix("stack traceback:") == true)
        #expect(error?.traceback.contains("inner") == true)
        #expect(error?.traceback.contains("outer") == true)
        #expect(state.stack.top == 0)
    }

    @Test func syntaxErrorsThrowWithTheirKind() throws {
        let state = try LuaState()
        let error = #expect(throws: LuaError.self) { try state.run("return 1 +", name: "=chunk", as: Int.self) }
        #expect(error?.kind == .syntax)
        #expect(error?.message.hasPrefix("chunk:1:") == true)
    }

    // MARK: Calling Lua from Swift

    @Test func callGlobalFunctionsWithTypedArguments() throws {
        let state = try LuaState()
        try state.run("function join(sep, list) return table.concat(list, sep) end")
        #expect(try state.call("join", ", ", ["a", "b", "c"], as: String.self) == "a, b, c")
        try state.run("function pair(a, b) return b, a end")
        let results = try state.call("pair", 1, "x")
        #expect(results.count == 2)
        guard case .string("x") = results[0], case .integer(1) = results[1] else {
            Issue.record("unexpected results \(results)")
            return
        }
        state.installGlobals()
        #expect(try state.call("bk.version", as: String.self) == BKModule.version)
        #expect(try state.call("string.rep", "ab", 3, as: String.self) == "ababab")
        #expect(state.stack.top == 0)
    }

    @Test func callErrors() throws {
        let state = try LuaState()
        let missing = #expect(throws: LuaError.self) { try state.call("nope", 1) }
        #expect(missing?.message == "attempt to call a nil value (global 'nope')")
        let notTable = #expect(throws: LuaError.self) { try state.call("print.x") }
        #expect(notTable?.message == "attempt to index a function value ('print')")
        try state.run("function fails(x) error('bad ' .. x) end", name: "=defs")
        let failed = #expect(throws: LuaError.self) { try state.call("fails", "input") }
        #expect(failed?.message == "defs:1: bad input")
        #expect(failed?.traceback.contains("fails") == true)
        #expect(state.stack.top == 0)
    }

    @Test func luaRefCallsTheFunctionItHolds() throws {
        let state = try LuaState()
        let f = try state.run("return function(a, b) return a .. b end", as: LuaRef.self)
        #expect(try f.call("x", 1, as: String.self) == "x1")
        let table = try state.run("return {1, 2}", as: LuaRef.self)
        #expect(try table.get(as: [Int].self) == [1, 2])
        #expect(throws: LuaError.self) { try table.call() }
    }

    @Test func luaRefFieldsAndMethodsRunMetamethods() throws {
        let state = try LuaState()
        let object = try state.run("""
            local Account = {}
            Account.__index = function(t, k) return k == "kind" and "account" or Account[k] end
            function Account:deposit(n) self.balance = self.balance + n; return self.balance end
            return setmetatable({balance = 10}, Account)
            """, as: LuaRef.self)
        #expect(try object.field("kind", as: String.self) == "account")    // through __index
        #expect(try object.callMethod("deposit", 5, as: Int.self) == 15)
        try object.setField("balance", 100)
        #expect(try object.field("balance", as: Int.self) == 100)
        let missing = #expect(throws: LuaError.self) { try object.callMethod("withdraw", 1) }
        #expect(missing?.message.contains("attempt to call a nil value") == true)
        let counter = Counter(name: "c")
        try state.setGlobal("counter", counter)
        let bridged = try state.global("counter", as: LuaRef.self)
        #expect(try bridged.callMethod("increment", 4, as: Int.self) == 4)
        try bridged.setField("count", 9)
        #expect(counter.count == 9)
        let readOnly = #expect(throws: LuaError.self) { try bridged.setField("name", "x") }
        #expect(readOnly?.message.hasSuffix("field 'name' of Counter is read-only") == true)
    }

    @Test func luaRefOutlivingItsStateThrows() throws {
        var state: LuaState? = try LuaState()
        let f = try state?.run("return print", as: LuaRef.self)
        state = nil
        let error = #expect(throws: LuaError.self) { try f?.call() }
        #expect(error?.message == "the Lua state of this reference is closed")
    }

    // MARK: Swift functions in Lua

    @Test func registeredClosuresTakeTypedArguments() throws {
        let state = try LuaState()
        state.register("add") { (a: Int, b: Int) in a + b }
        state.register("greet") { (name: String?) in "hello, " + (name ?? "you") }
        state.register("sum") { (xs: [Double]) in xs.reduce(0, +) }
        var seen: [String: Int] = [:]
        state.register("record") { (values: [String: Int]) in seen = values }
        #expect(try state.run("return add(2, 3)", as: Int.self) == 5)
        #expect(try state.run("return greet()", as: String.self) == "hello, you")
        #expect(try state.run("return greet('Ann')", as: String.self) == "hello, Ann")
        #expect(try state.run("return sum({1, 2.5})", as: Double.self) == 3.5)
        try state.run("record({a = 1})")
        #expect(seen == ["a": 1])
    }

    @Test func registeredClosuresCheckArgumentsWithLuaWording() throws {
        let state = try LuaState()
        state.register("add") { (a: Int, b: Int) in a + b }
        state.register("sum") { (xs: [Double]) in xs.reduce(0, +) }
        state.register("record") { (_: [String: Int]) in }
        let cases: [(String, String)] = [
            ("add(1, 'x')", "bad argument #2 to 'add' (number expected, got string)"),
            ("add(1)", "bad argument #2 to 'add' (number expected, got no value)"),
            ("add(1.5, 2)", "bad argument #1 to 'add' (number has no integer representation)"),
            ("sum(3)", "bad argument #1 to 'sum' (table expected, got number)"),
            ("sum({1, 'x'})", "bad argument #1 to 'sum' (number expected at [2], got string)"),
            ("record({[true] = 1})", "bad argument #1 to 'record' (string key expected, got boolean)"),
            ("record({a = 'x'})", "bad argument #1 to 'record' (number value expected, got string)"),
        ]
        for (code, expected) in cases {
            let error = #expect(throws: LuaError.self) { try state.run(code, name: "=t") }
            #expect(error?.message == "t:1: " + expected, "\(code)")
        }
    }

    @Test func swiftErrorsBecomeLuaErrorsAtTheCaller() throws {
        let state = try LuaState()
        state.register("fail") { () throws in throw SwiftFailure() }
        let error = #expect(throws: LuaError.self) { try state.run("local x = 1\nfail()", name: "=s") }
        #expect(error?.message == "s:2: the Swift side failed")
        #expect(try state.run("return select(2, pcall(fail))", as: String.self).hasSuffix("the Swift side failed"))
    }

    @Test func nestedLuaErrorsKeepTheirMessageAndTraceback() throws {
        let state = try LuaState()
        try state.run("function inner() error('deep') end", name: "=defs")
        state.register("outer") { () throws in _ = try state.call("inner") }
        let error = #expect(throws: LuaError.self) { try state.run("outer()", name: "=main") }
        #expect(error?.message == "defs:1: deep")
        #expect(error?.traceback.contains("inner") == true)
    }

    @Test func callbacksFromCoroutinesRunOnTheCoroutine() throws {
        let state = try LuaState()
        state.register("callBack") { (f: LuaRef) in try f.call(as: Bool.self) }
        state.register("callGlobal") { () in try state.call("isMain", as: Bool.self) }
        try state.run("function isMain() local _, main = coroutine.running(); return main end")
        #expect(try state.run("return callBack(isMain)", as: Bool.self) == true)
        #expect(try state.run("return coroutine.wrap(function() return callBack(isMain) end)()", as: Bool.self) == false)
        #expect(try state.run("return coroutine.wrap(function() return callGlobal() end)()", as: Bool.self) == false)
        #expect(try state.call("isMain", as: Bool.self) == true)
    }

    @Test func swiftClosuresAsLuaFunctions() throws {
        let state = try LuaState()
        try state.run("function apply(f, ...) return f(...) end")
        let scale = LuaClosure(name: "scale") { (x: Int, factor: Int?) in x * (factor ?? 10) }
        #expect(try state.call("apply", scale, 4, as: Int.self) == 40)
        #expect(try state.call("apply", scale, 4, 3, as: Int.self) == 12)
        let error = #expect(throws: LuaError.self) { try state.call("apply", scale, "four") }
        #expect(error?.message.hasSuffix("bad argument #1 to 'scale' (number expected, got string)") == true)
        // The body is @Sendable (LuaClosure is Sendable): what it changes is behind a lock.
        let seen = Locked<[String]>([])
        try state.setGlobal("remember", LuaClosure { (s: String) in seen.withLock { $0.append(s) } })
        try state.run("remember('a'); remember(2)")
        #expect(seen.withLock { $0 } == ["a", "2"])
        // The bk helpers by their dotted name, even without the global bk.
        #expect(try state.call("bk.version", as: String.self) == BKModule.version)
    }

    @Test func bkHelpersFromSwiftWithSwiftClosures() async throws {
        let state = try LuaState()
        let tens = try state.call("bk.map", [1, 2, 3], LuaClosure { (x: Int) in x * 10 }, as: [Int].self)
        #expect(tens == [10, 20, 30])
        let sum = try state.call("bk.reduce", [1, 2, 3, 4], 0, LuaClosure { (acc: Int, x: Int) in acc + x }, as: Int.self)
        #expect(sum == 10)
        let adults = try state.call("bk.select", ["ann": 31, "bob": 17],
                                    LuaClosure { (_: String, age: Int) in age >= 18 }, as: [String: Int].self)
        #expect(adults == ["ann": 31])
        let error = #expect(throws: LuaError.self) {
            try state.call("bk.map", [1], LuaClosure(name: "negate") { (x: Bool) in !x }, as: [Bool].self)
        }
        #expect(error?.message.hasSuffix("bad argument #1 to 'negate' (boolean expected, got number)") == true)
        let fired = Locked<[String]>([])
        let handle = try await state.callUntilIdle("bk.performBlock",
                                                   LuaClosure { () in fired.withLock { $0.append("swift block") } }, 0.01,
                                                   as: LuaRef.self)
        #expect(fired.withLock { $0 } == ["swift block"])
        #expect(try handle.field("isFinished", as: Bool.self))
    }

    @Test func hostCallsInASandboxGetAFreshBudgetEach() throws {
        let state = try LuaState(sandbox: Sandbox(instructionLimit: 200_000))
        try state.run("function work(n) local x = 0 for i = 1, n do x = x + i end return x end")
        // Each call uses most of the budget: only a fresh budget per call lets all of them finish.
        for _ in 0 ..< 5 {
            #expect(try state.call("work", 50_000, as: Int.self) == 1_250_025_000)
        }
        let work = try state.global("work", as: LuaRef.self)
        #expect(try work.call(50_000, as: Int.self) == 1_250_025_000)
        #expect(try work.call(50_000, as: Int.self) == 1_250_025_000)
        let error = #expect(throws: LuaError.self) { try state.run("while true do end", name: "=loop", as: Int?.self) }
        #expect(error?.message.contains("instruction limit exceeded") == true)
        #expect(try state.run("return work(10)", as: Int.self) == 55)
    }

    // MARK: Swift classes

    @Test func bridgedClassesHaveTypedMethodsAndProperties() throws {
        let state = try LuaState()
        let counter = Counter(name: "clicks")
        try state.setGlobal("counter", counter)
        #expect(try state.run("return counter:increment()", as: Int.self) == 1)
        #expect(try state.run("return counter:bk_increment(5)", as: Int.self) == 6)
        try state.run("counter.count = counter.count * 10")
        #expect(counter.count == 60)
        counter.count = 7
        #expect(try state.run("return counter.count", as: Int.self) == 7)
        #expect(try state.run("return counter.name", as: String.self) == "clicks")
        try state.run("counter:reset()")
        #expect(counter.count == 0)
        #expect(try state.global("counter", as: Counter.self) === counter)
        #expect(try state.call("tostring", counter, as: String.self).hasPrefix("Counter"))
    }

    @Test func bridgedClassErrors() throws {
        let state = try LuaState()
        try state.setGlobal("counter", Counter(name: "c"))
        let cases: [(String, String)] = [
            ("counter.count = 'x'", "bad value for field 'count' of Counter (number expected, got string)"),
            ("counter.name = 'y'", "field 'name' of Counter is read-only"),
            ("counter.increment({})", "bad argument #1 to 'increment' (Counter expected, got table)"),
            ("counter:increment('many')", "bad argument #1 to 'increment' (number expected, got string)"),
        ]
        for (code, expected) in cases {
            let error = #expect(throws: LuaError.self) { try state.run(code, name: "=t") }
            #expect(error?.message == "t:1: " + expected, "\(code)")
        }
        #expect(throws: LuaError.self) { try state.global("counter", as: String.self) }
    }

    // MARK: Globals

    @Test func globalsRoundTrip() throws {
        let state = try LuaState()
        try state.setGlobal("config", ["sizes": [1, 2], "empty": []])
        #expect(try state.run("return #config.sizes + #config.empty", as: Int.self) == 2)
        #expect(try state.global("config", as: [String: [Int]].self) == ["sizes": [1, 2], "empty": []])
        #expect(try state.global("missing", as: Int?.self) == nil)
        let error = #expect(throws: LuaError.self) { try state.global("missing", as: Int.self) }
        #expect(error?.message == "cannot convert global 'missing' to Int (number expected, got nil)")
    }

    // MARK: async

    @Test func asyncEntryPoints() async throws {
        let state = try LuaState()
        #expect(try await state.runUntilIdle("return 40 + 2", as: Int.self) == 42)
        try state.run("function twice(x) return x * 2 end")
        #expect(try await state.callUntilIdle("twice", 21, as: Int.self) == 42)
        await #expect(throws: LuaError.self) { try await state.runUntilIdle("error('async boom')", as: Int?.self) }
    }

    @Test func asyncEntryPointsRunWhatTheCodeScheduled() async throws {
        let state = try LuaState()
        let steps = try await state.runUntilIdle("""
            local bk = require "bk"
            steps = {}
            bk.performBlock(function() steps[#steps + 1] = "block" end, 0.02)
            local ticks = 0
            bk.scheduledTimerWithTimeInterval(0.005, function(timer)
              ticks = ticks + 1
              if ticks == 3 then steps[#steps + 1] = "timer"; timer:invalidate() end
            end, true)
            return #steps
            """, as: Int.self)
        #expect(steps == 0)  // the result is read before the loop runs
        #expect(try state.global("steps", as: [String].self).sorted() == ["block", "timer"])
        try state.run("function later(x) require('bk').performBlock(function() result = x * 2 end, 0.01) return x end")
        #expect(try await state.callUntilIdle("later", 21, as: Int.self) == 21)
        #expect(try state.global("result", as: Int.self) == 42)
        #expect(state.eventLoop.pendingCount == 0)
    }

    // MARK: The C module entry

    @Test func luaopenBkBuildsTheModuleInAForeignState() throws {
        // A state made without the bridge (as stock lua5.4 makes it), closed by its owner.
        guard let L = luaL_newstate() else { Issue.record("no state"); return }
        defer { lua_close(L) }
        #expect(bk_openlibs(L) == LUA_OK)
        // `require` calls luaopen_bk as it would find it in bk.so.
        bk_pushcfunction(L, luaopen_bk)
        lua_setglobal(L, "luaopen_bk")
        let code = """
        package.preload.bk = luaopen_bk
        local bk = require "bk"
        package.loaded.bk = nil
        assert(require "bk" == bk, "one bridge per state")
        assert(bk.version() == "\(BKModule.version)")
        local ok, err = pcall(bk.installGlobals, 1)
        assert(not ok and err:find("bad argument #1 to 'installGlobals'", 1, true), err)
        return bk
        """
        #expect(bk_loadbuffer(L, code, code.utf8.count, "=foreign", "t") == LUA_OK)
        let status = bk_pcall(L, 0, 1, 0)
        #expect(status == LUA_OK, "\(String(cString: bk_tostring(L, -1)))")
        #expect(lua_type(L, -1) == LUA_TTABLE)
    }
}
