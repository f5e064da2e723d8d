import Testing
import BlocksBridge

/// Typed reads of script values from a host: sizes never come from `#t`.
@Suite struct LuaConvertibleTests {
    private static let hugeBorder = """
        local t = {1, 2, 3, 4, 5}
        t[8] = 8; t[9] = 9
        for k = 4, 40 do t[1 << k] = 1 end
        assert(#t >= 1 << 20, "the table must have a huge border")
        """

    @Test func anArrayWhoseBorderIs2To40IsReadUpToItsFirstNil() throws {
        let lua = try LuaState()
        // [Int] cannot hold the nil at 6 (a hole before the border): a clear error, not an abort.
        let error = #expect(throws: LuaError.self) { try lua.run(Self.hugeBorder + " return t", as: [Int].self) }
        #expect(error?.message.contains("cannot convert result to Array<Int>") == true, "\(String(describing: error))")
        // [LuaValue] reads the list before the hole (as ipairs), without sizing from #t.
        let values = try lua.run(Self.hugeBorder + " return t", as: [LuaValue].self)
        #expect(values.count == 5)
        // A clean list of any length still reads whole.
        let long = try lua.run("local t = {} for i = 1, 100000 do t[i] = i end return t", as: [Int].self)
        #expect(long.count == 100_000 && long.last == 100_000)
    }
}
