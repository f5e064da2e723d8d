import Testing
import BlocksBridge

/// Swift values that cannot go into Lua as they are, and strings that must keep their bytes.
@Suite struct HostValueTests {
    // MARK: NaN and nil table keys

    @Test func setGlobalWithANaNKeyThrowsAndLeavesTheGlobal() throws {
        let state = try LuaState()
        try state.run("t = 'before'")
        let error = #expect(throws: LuaError.self) { try state.setGlobal("t", [Double.nan: 1, 2.5: 2]) }
        #expect(error?.message == "cannot set global 't' (table index is NaN)")
        #expect(try state.global("t", as: String.self) == "before")
        #expect(state.stack.top == 0)
        // The state goes on working.
        try state.setGlobal("t", [2.5: 2])
        #expect(try state.run("return t[2.5]", as: Int.self) == 2)
    }

    @Test func nilKeysOfOptionalKeyedDictionariesThrow() throws {
        let state = try LuaState()
        let keys: [String?: Int] = [nil: 1, "a": 2]
        let error = #expect(throws: LuaError.self) { try state.setGlobal("t", keys) }
        #expect(error?.message == "cannot set global 't' (table index is nil)")
    }

    @Test func callArgumentsWithANaNKeyThrowBeforeTheCall() throws {
        let state = try LuaState()
        try state.run("called = false; function f() called = true end")
        let nested: [[Double: Int]] = [[1: 1], [.nan: 2]]
        let error = #expect(throws: LuaError.self) { try state.call("f", 1, nested) }
        #expect(error?.message == "bad argument #2 (table index is NaN)")
        #expect(try state.global("called", as: Bool.self) == false)
        let ref = try state.run("return {}", as: LuaRef.self)
        let fieldError = #expect(throws: LuaError.self) { try ref.setField("x", [Double.nan: 1]) }
        #expect(fieldError?.message == "cannot set field 'x' (table index is NaN)")
    }

    @Test func registeredClosuresReturningANaNKeyRaiseALuaError() throws {
        let state = try LuaState()
        state.register("weights") { () -> [Double: Int] in [1: 1, .nan: 2] }
        let message = try state.run("""
            local ok, message = pcall(function() return weights() end)
            return not ok and message
            """, name: "=script", as: String.self)
        #expect(message == "script:1: bad result (table index is NaN)")
        // A bridged property getter too.
        try state.setGlobal("holder", Holder())
        let field = try state.run("local ok, m = pcall(function() return holder.weights end); return m",
                                  name: "=script", as: String.self)
        #expect(field == "script:1: bad value of field 'weights' (table index is NaN)")
    }

    // MARK: References of another state

    @Test func aReferencePushedIntoAnotherStateIsAnError() throws {
        let one = try LuaState()
        let other = try LuaState()
        try other.run("x = 'untouched'")
        let table = try one.run("return {tag = 'one'}", as: LuaRef.self)
        // The slot's number means something else (or nothing) in `other`.
        let error = #expect(throws: LuaError.self) { try other.setGlobal("x", table) }
        #expect(error?.message == "cannot set global 'x' (a LuaRef of another Lua state)")
        #expect(try other.global("x", as: String.self) == "untouched")
        try other.run("function tag(t) return t and t.tag end")
        let callError = #expect(throws: LuaError.self) { try other.call("tag", table) }
        #expect(callError?.message == "bad argument #1 (a LuaRef of another Lua state)")
        let valueError = #expect(throws: LuaError.self) { try other.call("tag", LuaValue.table(table)) }
        #expect(valueError?.message == "bad argument #1 (a LuaRef of another Lua state)")
        other.register("foreign") { () in table }
        let raised = try other.run("local ok, m = pcall(function() return foreign() end); return m", name: "=script", as: String.self)
        #expect(raised == "script:1: bad result (a LuaRef of another Lua state)")
        // In its own state it is the table.
        try one.run("function tag(t) return t.tag end")
        #expect(try one.call("tag", table, as: String.self) == "one")
    }

    @Test func aReferenceOfAClosedStateIsAnError() throws {
        var closing: LuaState? = try LuaState()
        let ref = try #require(closing).run("return {}", as: LuaRef.self)
        closing = nil
        let other = try LuaState()
        let error = #expect(throws: LuaError.self) { try other.setGlobal("x", ref) }
        #expect(error?.message == "cannot set global 'x' (a LuaRef of a closed Lua state)")
    }

    // MARK: Bytes

    @Test func luaValueKeepsTheBytesOfNonUTF8Strings() throws {
        let state = try LuaState()
        try state.run(#"binary = "\255\254a\0b\192""#)
        let value = try state.global("binary", as: LuaValue.self)
        guard case .bytes(let bytes) = value else {
            Issue.record("expected .bytes, got \(value)")
            return
        }
        #expect(bytes == [0xFF, 0xFE, 0x61, 0x00, 0x62, 0xC0])
        // Lua -> LuaValue -> Lua is byte-identical.
        try state.run("function same(s) return s == binary, #s end")
        let back = try state.call("same", value)
        #expect(back.first?.boolean == true)
        #expect(back.last?.integer == 6)
        // Valid UTF-8 (with a zero byte) stays a String, unchanged.
        let text = try state.run(#"return "h\u{E9}\0!""#, as: LuaValue.self)
        guard case .string(let string) = text else {
            Issue.record("expected .string, got \(text)")
            return
        }
        #expect(Array(string.utf8) == [0x68, 0xC3, 0xA9, 0x00, 0x21])
        #expect(try state.call("same", text).first?.boolean == false)
    }

    @Test func stringConversionReplacesInvalidUTF8() throws {
        let state = try LuaState()
        #expect(try state.run(#"return "a\255b""#, as: String.self) == "a\u{FFFD}b")
        #expect(try state.run(#"return "a\255b""#, as: LuaValue.self).description == "a\u{FFFD}b")
    }
}

/// A bridged object whose property cannot go into Lua as it is.
private final class Holder: LuaBridged, LuaConvertible {
    var weights: [Double: Int] = [.nan: 1]
    static let luaClass = LuaClass(name: "test.Holder", properties: [.readOnly("weights", \Holder.weights)])
}
