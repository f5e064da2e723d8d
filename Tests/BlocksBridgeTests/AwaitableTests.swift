import Testing
@testable import BlocksBridge

private struct Refused: Error, CustomStringConvertible {
    var description: String { "refused" }
}

/// The one protocol of awaitable Swift objects (`LuaAwaitable`): every kind answers the engine's
/// `native.poll` in the one documented shape, `state, registration|nil, events, values...`.
@Suite struct AwaitableTests {
    /// A state whose global `native` is the tasks engine's natives table, with Swift calls that
    /// finished (`doneCall`, results 7 and "seven"), failed (`failedCall`) and run on (`pendingCall`).
    private func awaitablesState() throws -> (LuaState, SwiftAsyncCall) {
        let state = try bareState()
        let stack = state.stack
        let loop = stack.eventLoop
        let done = SwiftAsyncCall(loop: loop)
        done.start { { stack in stack.push(7); stack.push("seven"); return 2 } }
        let failed = SwiftAsyncCall(loop: loop)
        failed.start { throw Refused() }
        let pending = SwiftAsyncCall(loop: loop)
        pending.start {
            try await Task.sleep(for: .seconds(600))
            return { _ in 0 }
        }
        stack.pushGlobalTable()
        TaskPrimitives.push(on: stack)
        stack.rawSet(-2, field: "native")
        for (name, call) in [("doneCall", done), ("failedCall", failed), ("pendingCall", pending)] {
            stack.push(newObject: call)
            stack.rawSet(-2, field: name)
        }
        stack.pop()
        return (state, pending)
    }

    @Test func everyKindAnswersPollInOneShape() throws {
        let (state, pending) = try awaitablesState()
        defer { pending.cancel() }
        let report = try state.run("""
            local bk = require "bk"
            local P, D, F, C = native.PENDING, native.DONE, native.FAILED, native.CANCELLED
            local out = {}
            -- x answers poll as state, nil (no waiter), events, values...
            local function expect(name, x, state, events, ...)
              local r = table.pack(native.poll(x))
              local want = table.pack(state, nil, events, ...)
              local ok = r.n == want.n and math.type(r[1]) == "integer" and math.type(r[3]) == "integer"
              for i = 1, want.n do ok = ok and r[i] == want[i] end
              if not ok then
                local got = {}
                for i = 1, r.n do got[i] = tostring(r[i]) end
                out[#out + 1] = name .. ": " .. table.concat(got, ",")
              end
            end
            -- and, while pending, keeps a waiter: an integer registration that unwatch drops
            local function expectWaiter(name, x)
              local state, registration, events = native.poll(x, function() end, {})
              if state ~= P or math.type(registration) ~= "integer" or math.type(events) ~= "integer" then
                out[#out + 1] = name .. " with a waiter: " .. tostring(state) .. "," .. tostring(registration)
              end
              native.unwatch(x, registration)
            end

            local later = bk.performBlock(function() end, 600)
            expect("pending handle", later, P, 0)
            expectWaiter("pending handle", later)
            local soon = bk.performBlock(function() end, 0)
            local cancelled = bk.performBlock(function() end, 600)
            cancelled:cancel()
            later:cancel()
            local timer = bk.scheduledTimerWithTimeInterval(0.001, function() end, true)
            expect("valid timer", timer, P, 0)
            expectWaiter("valid timer", timer)
            local unfired = bk.scheduledTimerWithTimeInterval(600, function() end)
            unfired:invalidate()
            local once = bk.scheduledTimerWithTimeInterval(0.001, function() end)
            local w = bk.worker(function() return 1, "two" end)
            local bad = bk.worker(function() error("boom", 0) end)
            bk.await(soon)
            bk.await(timer)
            bk.await(once)
            bk.await(w)
            pcall(bk.await, bad)
            bk.await(doneCall)
            pcall(bk.await, failedCall)

            expect("finished handle", soon, D, 1)
            expect("cancelled handle", cancelled, C, 1)
            local state, _, firings = native.poll(timer)  -- it fires on while the loop runs
            if state ~= P or math.type(firings) ~= "integer" or firings < 1 then out[#out + 1] = "timer that fired" end
            timer:invalidate()
            expect("timer invalidated after firing", timer, D, firings)
            expect("timer invalidated unfired", unfired, C, 0)
            expect("timer that fired once", once, D, 1)
            expect("worker", w, D, 1, 1, "two")
            expect("failed worker", bad, F, 1, "boom")
            expect("Swift call", doneCall, D, 1, 7, "seven")
            expect("failed Swift call", failedCall, F, 1, "refused")
            expect("pending Swift call", pendingCall, P, 0)
            expectWaiter("pending Swift call", pendingCall)
            local notAwaitable = table.pack(native.poll({}))
            if notAwaitable.n ~= 1 or notAwaitable[1] ~= nil then out[#out + 1] = "a table answered" end
            if native.isAwaitable({}) or not native.isAwaitable(w) then out[#out + 1] = "isAwaitable" end
            return table.concat(out, "; ")
            """, as: String.self)
        #expect(report == "")
    }

    /// The states are four distinct integers, exported once from `LuaAwaitState`.
    @Test func statesAreExportedOnce() throws {
        let (state, pending) = try awaitablesState()
        defer { pending.cancel() }
        for awaitState in LuaAwaitState.allCases {
            #expect(try state.run("return native.\(awaitState.luaName)", as: Int64.self) == awaitState.rawValue)
        }
        #expect(Set(LuaAwaitState.allCases.map(\.rawValue)).count == LuaAwaitState.allCases.count)
    }
}
