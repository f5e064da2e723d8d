import Testing
import CLua
import CLuaShim
@testable import BlocksBridge

/// The state's own bookkeeping at the boundary: the trampoline's frames and depth, and close.
@Suite struct LuaStateTests {
    /// Registers a raw Swift function as a global.
    private func register(_ state: LuaState, _ name: String, runsAtClose: Bool = false, _ body: @escaping LuaFunction) {
        let stack = state.stack
        stack.push(function: name, runsAtClose: runsAtClose, body)
        stack.pushGlobalTable()
        stack.insert(at: -2)
        stack.rawSet(-2, field: name)
        stack.pop()
    }

    @Test func trampolineBookkeepingSurvivesALongjmpThroughSwift() throws {
        let state = try LuaState(memoryLimit: 0)
        // Breaks rule 1 on purpose: raises from inside the Swift frame, as an allocation failure
        // with no reserve left would. The trampoline's exit is skipped every time.
        register(state, "escape") { stack in
            stack.push("escaped")
            lua_error(stack.L)
            return 0
        }
        register(state, "nested") { stack throws(LuaRaise) in
            try stack.checkFunction(1)
            _ = stack.pushMessageHandler()
            stack.insert(at: 1)
            try stack.callBlock(arguments: 0, results: 1, handler: 1)
            return 1
        }
        // Far more than the 160 nested calls allowed: leaked frames would count as nesting.
        let escaped = try state.run("""
            local n = 0
            for i = 1, 500 do if not pcall(escape) then n = n + 1 end end
            local depth = 0
            local function deeper() depth = depth + 1 if depth < 100 then return nested(deeper) end return depth end
            return n, nested(deeper)
            """)
        #expect(escaped.map(\.scalar) == [.integer(500), .integer(100)])
        // The memory cap applies again to Lua code from the next bk call on (a leaked depth used
        // to exempt it for good).
        state.memoryLimit = state.memoryInUse + (4 << 20)
        let capped = #expect(throws: LuaError.self) {
            try state.run("pcall(escape) nested(function() end) local t = {} for i = 1, 1e7 do t[i] = i end")
        }
        #expect(capped?.message.contains("not enough memory") == true)
    }

    @Test func exportedFunctionsRefuseToRunWhileTheStateCloses() throws {
        final class Record: @unchecked Sendable { var answers: [String] = [] }
        let record = Record()
        do {
            let state = try scriptingState()
            register(state, "probe") { stack in
                stack.push("ran")
                return 1
            }
            register(state, "record", runsAtClose: true) { stack in
                for i in 1 ... max(stack.top, 1) {
                    record.answers.append(stack.type(at: i) == .boolean ? "\(stack.toBool(i))" : stack.toString(i) ?? "?")
                }
                return 0
            }
            try state.run("""
                KEEP = setmetatable({}, {__gc = function()
                  record(pcall(probe))
                  record(pcall(bk.performBlock, function() end, 0))
                end})
                """)
        }
        #expect(record.answers.count == 4, "\(record.answers)")
        #expect(record.answers.first == "false")
        #expect(record.answers.dropFirst().first == "cannot call 'probe' while the Lua state is closing")
        #expect(record.answers.last == "cannot call 'performBlock' while the Lua state is closing")
    }
}
