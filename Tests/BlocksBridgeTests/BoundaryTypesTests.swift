import Testing
import CLuaShim
@testable import BlocksBridge

/// The boundary's types: the trampoline's statuses and the stack guard.
@Suite struct BoundaryTypesTests {
    static let statuses: [TrampolineStatus] = [
        .results(0), .results(3), .raiseValue, .raiseMessage, .raiseArgument, .raiseType, .continueWalk, .continueCall,
    ]

    @Test func trampolineStatusesRoundTripThroughTheirCodes() {
        for status in Self.statuses { #expect(TrampolineStatus(code: status.code) == status) }
        #expect(Set(Self.statuses.map(\.code)).count == Self.statuses.count)
    }

    /// bk_walk_run's "no stack" is neither a status nor a Lua status (it once shared -1 with
    /// BK_RAISE_VALUE).
    @Test func theWalksNoStackCodeIsNoTrampolineStatus() {
        #expect(TrampolineStatus(code: BK_WALK_NO_STACK) == nil)
        #expect(BK_WALK_NO_STACK < 0)
    }

    @Test func withRestoredTopRestoresOnEveryExit() throws {
        let state = try LuaState()
        let stack = state.stack
        stack.push(1)
        stack.push(2)
        let pushed = stack.withRestoredTop { (base: Int32) -> Int32 in
            stack.push(3)
            stack.push(4)
            return stack.top - base
        }
        #expect(pushed == 2 && stack.top == 2)
        #expect(throws: LuaRaise.self) {
            try stack.withRestoredTop { () throws(LuaRaise) in
                stack.push(3)
                throw .message("no")
            }
        }
        #expect(stack.top == 2)
        stack.top = 0
    }

    /// A `.valueOnTop` thrown out of the guard raises the value the body left on top, unchanged.
    @Test func withRestoredTopKeepsTheValueARaiseRaises() throws {
        let state = try LuaState()
        let stack = state.stack
        stack.push(function: "raiseInGuard") { stack throws(LuaRaise) in
            try stack.withRestoredTop { () throws(LuaRaise) -> Int32 in
                stack.push(1)
                stack.push(2)
                stack.pushNewTable()
                stack.push("boom")
                stack.rawSet(-2, field: "reason")
                throw .valueOnTop
            }
        }
        stack.pushGlobalTable()
        stack.insert(at: -2)
        stack.rawSet(-2, field: "raiseInGuard")
        stack.pop()
        let answer = try state.run("""
            local ok, e = pcall(raiseInGuard, 'a', 'b')
            return ok and 'no error' or type(e) == 'table' and e.reason or 'got ' .. tostring(e)
            """, as: String.self)
        #expect(answer == "boom")
    }
}
