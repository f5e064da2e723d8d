import Testing
import CLua
@testable import BlocksBridge

/// Exports test functions the way the bk libraries export theirs.
private func exportTestFunctions(_ state: LuaState) {
    let stack = state.stack
    // callBlock(f, ...): calls f(...) as a helper calls a block; errors go back to the caller.
    stack.push(function: "callBlock") { stack throws(LuaRaise) in
        try stack.checkFunction(1)
        _ = stack.pushMessageHandler()
        stack.insert(at: 1)
        try stack.callBlock(arguments: stack.top - 2, results: LUA_MULTRET, handler: 1)
        return stack.top - 1
    }
    stack.pushGlobalTable()
    stack.insert(at: -2)
    stack.rawSet(-2, field: "callBlock")
    stack.push(function: "map") { stack throws(LuaRaise) in
        try stack.checkTable(1)
        try stack.checkFunction(2)
        return 0
    }
    stack.rawSet(-2, field: "map")
    stack.push(function: "count") { stack throws(LuaRaise) in
        let n = try stack.checkInteger(1)
        let s = try stack.optString(2, default: "x")
        stack.push(String(repeating: s ?? "", count: Int(max(0, min(n, 10)))))
        return 1
    }
    stack.rawSet(-2, field: "count")
    stack.pop()
}

@Suite struct BoundaryTests {
    @Test func runReturnsValues() throws {
        let state = try bareState(exportTestFunctions)
        let values = try state.run("return 1 + 1, 'two', nil, 2.5, true")
        #expect(values.count == 5)
        guard case .integer(2) = values[0], case .string("two") = values[1], case .nil = values[2],
              case .number(2.5) = values[3], case .boolean(true) = values[4] else {
            Issue.record("unexpected values \(values)")
            return
        }
    }

    @Test func argumentErrorsUseLuaWording() throws {
        let state = try bareState(exportTestFunctions)
        let cases: [(String, String)] = [
            ("map({}, nil)", "bad argument #2 to 'map' (function expected, got nil)"),
            ("map()", "bad argument #1 to 'map' (table expected, got no value)"),
            ("map(1, print)", "bad argument #1 to 'map' (table expected, got number)"),
            ("count('a')", "bad argument #1 to 'count' (number expected, got string)"),
            ("count(1.5)", "bad argument #1 to 'count' (number has no integer representation)"),
            ("count(1, {})", "bad argument #2 to 'count' (string expected, got table)"),
            ("local t = {map = map}; t:map(nil)", "bad argument #1 to 'map' (function expected, got nil)"),
            ("local t = {map = map}; t.map(5)", "bad argument #1 to 'map' (table expected, got number)"),
            ("map(setmetatable({}, {__name = 'Thing'}), 1)", "bad argument #2 to 'map' (function expected, got number)"),
            ("map(io.stdout, 1)", "bad argument #1 to 'map' (table expected, got FILE*)"),
        ]
        for (code, expected) in cases {
            let result = try state.run("local ok, e = pcall(function() \(code) end); return e")
            guard case .string(let message) = result.first else {
                Issue.record("no error for \(code)")
                continue
            }
            #expect(message.hasSuffix(expected), "\(code): \(message)")
            #expect(message.hasPrefix("[string"), "position prefix missing: \(message)")
        }
        #expect(try state.run("return count(3, 'ab')", as: String.self) == "ababab")
    }

    @Test func callbackErrorComesBackAsSwiftErrorWithTraceback() throws {
        let state = try bareState(exportTestFunctions)
        do {
            try state.run("local function inner() error('deep failure') end\ncallBlock(inner)", name: "=chunk")
            Issue.record("no error thrown")
        } catch {
            #expect(error.message == "chunk:1: deep failure")
            #expect(error.traceback.hasPrefix("stack traceback:"))
            #expect(error.traceback.contains("chunk:1: in function"), "\(error.traceback)")
            #expect(error.traceback.contains("callBlock"), "\(error.traceback)")
            // Traced once, at the deepest point, not again on the way out.
            #expect(!error.traceback.dropFirst().contains("stack traceback:"))
        }
        #expect(try state.run("return 40 + 2", as: Int.self) == 42)
    }

    @Test func nonStringErrorValuesPassThroughHelpers() throws {
        let state = try bareState(exportTestFunctions)
        let result = try state.run("""
            local obj = setmetatable({}, {__tostring = function() return 'custom' end})
            local ok, e = pcall(callBlock, function() error(obj) end)
            return ok, rawequal(e, obj)
            """)
        #expect(result.first?.boolean == false)
        #expect(result.last?.boolean == true)
        let custom = #expect(throws: LuaError.self) {
            try state.run("error(setmetatable({}, {__tostring = function() return 'custom' end}))")
        }
        #expect(custom?.message == "custom")
        let table = #expect(throws: LuaError.self) { try state.run("error({})") }
        #expect(table?.message == "(error object is a table value)")
        let nested = #expect(throws: LuaError.self) {
            try state.run("error(setmetatable({}, {__tostring = function() error('nested') end}))")
        }
        #expect(nested?.message == "(error object is a table value)")
    }

    @Test func hundredThousandCallbackErrorsKeepStateUsableAndMemoryFlat() throws {
        let state = try bareState(exportTestFunctions)
        let stack = state.stack
        try state.run("function failing(i) error('failure ' .. i) end")
        func roundOfErrors(_ count: Int) throws {
            for i in 0 ..< count {
                stack.pushGlobalTable()
                stack.rawGet(-1, field: "callBlock")
                stack.remove(at: -2)
                stack.pushGlobalTable()
                stack.rawGet(-1, field: "failing")
                stack.remove(at: -2)
                stack.push(i)
                do {
                    try stack.call(arguments: 2, results: 0)
                    Issue.record("no error")
                    return
                } catch {
                    if i % 10_000 == 0 {
                        #expect(error.message.hasSuffix("failure \(i)"))
                        #expect(error.traceback.contains("failing"))
                    }
                }
            }
            #expect(stack.top == 0)
        }
        try roundOfErrors(scaled(10_000))
        try state.run("collectgarbage(); collectgarbage()")
        let baseline = state.memoryInUse
        try roundOfErrors(scaled(100_000))
        try state.run("collectgarbage(); collectgarbage()")
        #expect(state.memoryInUse < baseline + 64 * 1024, "grew from \(baseline) to \(state.memoryInUse)")
        // And the same from Lua: pcall around a Swift function whose Lua callback raises.
        let fromLua = try state.run("""
            local before = collectgarbage('count')
            for i = 1, \(scaled(100_000)) do
              local ok, e = pcall(callBlock, error, 'x' .. i)
              assert(not ok and e:match('^x' .. i))
            end
            collectgarbage(); collectgarbage()
            return collectgarbage('count') - before
            """)
        if case .number(let growthKB) = fromLua.first { #expect(growthKB < 64) }
        #expect(try state.run("return select('#', callBlock(function(...) return ... end, 1, 2, 3))", as: Int.self) == 3)
    }

    @Test func requireReturnsTheModuleAndGlobalsMatch() throws {
        let state = try LuaState()
        let before = try state.run("return bk == nil, bk_version == nil")
        #expect(before.map(\.scalar) == [.boolean(true), .boolean(true)])
        state.installGlobals()
        let after = try state.run("return require('bk') == bk, bk_version == bk.version, bk_installGlobals == bk.installGlobals")
        #expect(after.map(\.scalar) == [.boolean(true), .boolean(true), .boolean(true)])
    }

    @Test func syntaxErrorsAreThrown() throws {
        let state = try LuaState()
        do {
            try state.run("x = = 1", name: "=snippet")
            Issue.record("no error")
        } catch {
            #expect(error.kind == .syntax)
            #expect(error.message.hasPrefix("snippet:1:"))
        }
    }

    @Test func referenceDeinitFreesTheValue() throws {
        let state = try LuaState()
        // No automatic GC step between making the value and referencing it (a weak entry could go).
        try state.run("collectgarbage('stop'); probe = setmetatable({}, {__mode = 'v'}); probe[1] = {}")
        var values: [LuaValue]? = try state.run("return probe[1]")
        try state.run("collectgarbage('restart'); collectgarbage()")
        #expect(try state.run("return probe[1] ~= nil", as: Bool.self) == true)
        values = nil
        _ = values
        try state.run("collectgarbage()")
        #expect(try state.run("return probe[1] == nil", as: Bool.self) == true)
    }

    @Test func memoryLimitStopsAllocationsCleanly() throws {
        let state = try LuaState()
        state.memoryLimit = state.memoryInUse + 512 * 1024
        do {
            try state.run("local t = {} for i = 1, 1e7 do t[i] = tostring(i) .. 'xxxxxxxx' end")
            Issue.record("no memory error")
        } catch {
            #expect(error.kind == .memory || error.message.contains("not enough memory"), "\(error)")
        }
        state.memoryLimit = 0
        #expect(try state.run("return 6 * 7", as: Int.self) == 42)
    }
}

@Suite struct ErrorReportingTests {
    @Test func callbackErrorsGoToTheRegisteredHandlerWithTraceback() throws {
        let state = try LuaState()
        let stack = state.stack
        try state.run("reported = {}")
        stack.push(function: "handler") { stack in
            stack.pushGlobalTable()
            stack.rawGet(-1, field: "reported")
            stack.pushCopy(of: 1)
            stack.rawSet(-2, stack.rawLength(-2) + 1)
            return 0
        }
        stack.rawSet(LuaStack.registryIndex, field: "bk.onError")
        try state.stack.load("local x = nil; return x.field", name: "=callback")
        #expect(!stack.callReportingErrors(arguments: 0, results: 0))
        #expect(stack.top == 0)
        let reported = try state.run("return #reported, reported[1]")
        #expect(reported.first?.integer == 1)
        let text = reported.last?.string ?? ""
        #expect(text.hasPrefix("callback:1: attempt to index a nil value"), "\(text)")
        #expect(text.contains("stack traceback:"))
        // A successful call leaves its results.
        try state.stack.load("return 1, 2", name: "=ok")
        #expect(stack.callReportingErrors(arguments: 0, results: 2))
        #expect(stack.top == 2)
    }
}
