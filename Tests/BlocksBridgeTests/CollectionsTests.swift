import Testing
@testable import BlocksBridge

private struct Stop: Error, Equatable { let at: Int }

@Suite struct CollectionsTests {
    /// The fast helpers walk in C under one protected call: results they build past a memory cap
    /// fail there with Lua's memory error (catchable), and the state stays usable.
    @Test func memoryCapStopsWalkingHelpersCleanly() throws {
        let state = try LuaState()
        try state.run("bk = require \"bk\" t = {} for i = 1, 100000 do t[i] = i end d = {} for i = 1, 20000 do d['k' .. i] = i end")
        state.memoryLimit = state.memoryInUse + 256 * 1024
        for helper in ["bk.map(t, function(x) return {x} end)",
                       "bk.select(t, function(x) return tostring(x) end)",
                       "bk.map(d, function(k, v) return {v} end)",
                       "local keep = {} bk.each(t, function(x) keep[x] = {x} end)",
                       "bk.reduce(t, {}, function(a, x) a[x] = {x} return a end)"] {
            let result = try state.run("""
                local ok, err = pcall(function() \(helper) end)
                collectgarbage()
                return ok, tostring(err)
                """)
            #expect(result.first?.boolean == false, "\(helper)")
            #expect(result.last?.string?.contains("not enough memory") == true, "\(helper): \(result)")
        }
        state.memoryLimit = 0
        #expect(try state.run("return bk.reduce(bk.map({1, 2, 3}, function(x) return x * 2 end), 0, function(a, x) return a + x end)", as: Int.self) == 12)
    }

    @Test func sequenceHelpers() {
        let numbers = [1, 2, 3, 4]
        var seen: [Int] = []
        numbers.bk_each { seen.append($0) }
        #expect(seen == numbers)
        #expect(numbers.bk_select { $0 % 2 == 0 } == [2, 4])
        #expect(numbers.bk_reject { $0 % 2 == 0 } == [1, 3])
        #expect(numbers.bk_map { $0 * 10 } == [10, 20, 30, 40])
        #expect(numbers.bk_reduce(0, +) == 10)
        #expect(numbers.bk_reduce(0.5) { $0 + Double($1) } == 10.5)
        #expect(numbers.bk_match { $0 > 2 } == 3)
        #expect(numbers.bk_match { $0 > 9 } == nil)
        #expect(numbers.bk_corresponds(["1", "2", "3", "4"]) { String($0) == $1 })
        #expect(!numbers.bk_corresponds([1, 2, 3]) { _, _ in true })
    }

    @Test func earlyStoppingCountsCalls() {
        var calls = 0
        #expect([1, 2, 3, 4].bk_any { calls += 1; return $0 == 2 })
        #expect(calls == 2)
        calls = 0
        #expect(![1, 2, 3, 4].bk_all { calls += 1; return $0 < 2 })
        #expect(calls == 2)
        calls = 0
        #expect(![1, 2, 3, 4].bk_none { calls += 1; return $0 == 1 })
        #expect(calls == 1)
        calls = 0
        _ = [1, 2, 3, 4].bk_match { calls += 1; return $0 == 3 }
        #expect(calls == 3)
    }

    @Test func throwingClosureStopsTheHelper() {
        var calls = 0
        #expect(throws: Stop(at: 2)) {
            _ = try [1, 2, 3].bk_map { (x: Int) throws(Stop) -> Int in
                calls += 1
                if x == 2 { throw Stop(at: 2) }
                return x
            }
        }
        #expect(calls == 2)
    }

    @Test func dictionaryHelpers() {
        let ages = ["ann": 31, "bob": 17, "cy": 45]
        #expect(ages.bk_select { _, age in age >= 18 } == ["ann": 31, "cy": 45])
        #expect(ages.bk_reject { _, age in age >= 18 } == ["bob": 17])
        #expect(ages.bk_map { name, age in "\(name)\(age)" } == ["ann": "ann31", "bob": "bob17", "cy": "cy45"])
    }

    @Test func inPlaceHelpers() throws {
        var numbers = [1, 2, 3, 4, 5]
        numbers.bk_performSelect { $0 != 3 }
        #expect(numbers == [1, 2, 4, 5])
        numbers.bk_performReject { $0 % 2 == 0 }
        #expect(numbers == [1, 5])
        numbers.bk_performMap { $0 * 2 }
        #expect(numbers == [2, 10])
        // A failing transform leaves the collection unchanged.
        #expect(throws: Stop(at: 10)) {
            try numbers.bk_performMap { (x: Int) throws(Stop) -> Int in
                if x == 10 { throw Stop(at: 10) }
                return x + 1
            }
        }
        #expect(numbers == [2, 10])
    }

    /// A Swift host calls the Lua helpers on a table built from Swift.
    @Test func luaHelpersFromAHost() throws {
        let state = try LuaState()
        let values = try state.run("""
            local bk = require "bk"
            local s = bk.set {3, 1, 3, 2}
            return bk.kind(s), #s, bk.reduceInteger(s, 0, function(a, x) return a + x end),
                   tostring(bk.map({1}, function() end)[1])
            """)
        guard values.count == 4, case .string("set") = values[0], case .integer(3) = values[1],
              case .integer(6) = values[2], case .string("null") = values[3] else {
            Issue.record("unexpected \(values)")
            return
        }
    }

    @Test func luaBlockErrorsCarryTracebacks() throws {
        let state = try LuaState()
        do {
            try state.run("require('bk').each({1}, function() error('inside') end)", name: "=host")
            Issue.record("expected an error")
        } catch {
            #expect(error.message.contains("inside"))
            #expect(error.traceback.contains("stack traceback:"))
        }
    }

    @Test func stackIsBalancedAfterHelpers() throws {
        let state = try LuaState()
        let before = state.stack.top
        try state.run("""
            local bk = require "bk"
            local function no() return false end
            for _, c in ipairs({ {1, 2}, {a = 1}, bk.set{1}, bk.indexSet{1} }) do
              bk.map(c, tostring); bk.select(c, no); bk.any(c, no); bk.performSelect(c, no)
            end
            """)
        #expect(state.stack.top == before)
    }
}
