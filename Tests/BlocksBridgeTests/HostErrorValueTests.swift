import Testing
import CLua
import CLuaShim
@testable import BlocksBridge

/// Rule 4 for host calls: a Swift function called from Lua that calls a Lua callback which raises
/// lets the callback's error value reach its own Lua caller unchanged: a string without a
/// traceback pasted in, a table as the same table (it was "(error object is a table value)").
@Suite struct HostErrorValues {
    @Test func aCallbackErrorStringReachesTheLuaCallerUnchanged() throws {
        let state = try LuaState()
        state.register("apply") { (f: LuaRef, x: Int) throws -> Int in try f.call(x, as: Int.self) }
        let message = try state.run("""
            local ok, err = pcall(apply, function(x) error("boom") end, 1)
            return err
            """, name: "=eval", as: String.self)
        #expect(message == "eval:1: boom")
    }

    @Test func aCallbackErrorTableIsTheSameTable() throws {
        let state = try LuaState()
        state.register("apply") { (f: LuaRef, x: Int) throws -> Int in try f.call(x, as: Int.self) }
        #expect(try state.run("""
            local sentinel = {}
            local ok, err = pcall(apply, function() error(sentinel) end, 1)
            return ok == false and rawequal(err, sentinel)
            """, as: Bool.self))
        #expect(try state.run("""
            local ok, err = pcall(apply, function() error(42) end, 1)
            return math.type(err) == "integer" and err == 42
            """, as: Bool.self))
    }

    @Test func aLuaClosureAndAGlobalCallKeepTheValueToo() throws {
        let state = try LuaState()
        state.register("callGlobal") { (name: String) throws -> Int in try state.call(name, as: Int.self) }
        try state.run("function fails() error({ code = 7 }) end")
        #expect(try state.run("""
            local ok, err = pcall(callGlobal, "fails")
            return type(err) == "table" and err.code == 7
            """, as: Bool.self))
        // Two levels of host functions: the value still crosses both.
        state.register("twice") { (f: LuaRef) throws -> Int in try f.call(as: Int.self) }
        #expect(try state.run("""
            local ok, err = pcall(twice, function() return twice(function() error("deep", 0) end) end)
            return err
            """, as: String.self) == "deep")
    }

    @Test func theHostStillSeesMessageAndTraceback() throws {
        let state = try LuaState()
        try state.run("function inner() error('deep') end", name: "=defs")
        state.register("outer") { () throws in _ = try state.call("inner") }
        let error = #expect(throws: LuaError.self) { try state.run("outer()", name: "=main") }
        #expect(error?.message == "defs:1: deep")
        #expect(error?.traceback.contains("inner") == true)
        // The LuaError of a table error holds the table itself.
        try state.run("function tableError() error({ code = 9 }) end")
        let tableError = #expect(throws: LuaError.self) { try state.call("tableError") }
        #expect(tableError?.message == "(error object is a table value)")
        #expect(try tableError?.value?.get(as: [String: Int].self) == ["code": 9])
    }
}
