import BenchFloor
import BlocksBridge

/// The debugger's cost, in one process, each against the same script in a state without a debugger:
/// - a CPU-bound script (a numeric loop and a recursive function: about 30,000 calls a round) with a
///   debug server attached and a breakpoint in a function that is never called (target 1.3x: the
///   call events are the cost); the same with a function breakpoint on `Tools.never` instead (its
///   name is looked up at each call: reported, no target);
/// - the floor of that row for any design that follows calls: the same script in two bare Lua
///   states, one with an empty C call hook (Lua's own cost of a call event), one without;
/// - a conditional breakpoint whose condition never holds, reached `hits` times (the per-hit cost is
///   reported: the agent runs the condition each time).
func debuggerBenchmarks(hits: Int) throws -> [Benchmark] {
    let script = """
        local function neverCalled(x)
          return x + 1
        end
        local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
        function work()
          local s = 0
          for i = 1, 300000 do s = s + (i * 7) % 13 end
          return s + fib(21)
        end
        function hot(n)
          local s = 0
          for i = 1, n do
            s = s + i
          end
          return s
        end
        Tools = { never = function(x) return x end }
        """
    let path = "/bkbench/debugger-benchmark.lua"
    let plain = try LuaState()
    try plain.run(script, name: "@" + path)
    /// A state running the script with a debug server whose only breakpoint is `breakpoint` (a
    /// function breakpoint when `command` says so).
    func debugged(_ breakpoint: JSONValue, command: String = "setBreakpoints") throws -> LuaState {
        let state = try LuaState()
        try state.run(script, name: "@" + path)
        try state.startDebugServer(port: 0)
        guard let session = state.debugSession else { throw DebugServerError.cannotListen("no session") }
        session.handle(.object([
            ("seq", .number(1)), ("type", .string("request")), ("command", .string(command)),
            ("arguments", .object([("source", .object([("path", .string(path))])), ("breakpoints", .array([breakpoint]))])),
        ]))
        try state.run("hot(1)")  // takes the breakpoints (a poke)
        return state
    }
    /// Bare states for the floor: the script loaded, one with an empty call hook.
    guard let bareHooked = bench_floor_state(script, 1), let barePlain = bench_floor_state(script, 0) else {
        throw DebugServerError.cannotListen("no bare state")
    }
    let neverHit = try debugged(.object([("line", .number(2))]))
    let functionNeverHit = try debugged(.object([("name", .string("Tools.never"))]), command: "setFunctionBreakpoints")
    let conditional = try debugged(.object([("line", .number(13)), ("condition", .string("i < 0"))]))
    let attached = Benchmark(
        name: "debugger: breakpoint never hit (CPU-bound)",
        target: 1.3,
        ours: { try seconds { for _ in 0 ..< 4 { try neverHit.run("work()") } } },
        reference: { try seconds { for _ in 0 ..< 4 { try plain.run("work()") } } })
    let function = Benchmark(
        name: "debugger: function breakpoint never hit (CPU-bound)",
        target: nil,
        ours: { try seconds { for _ in 0 ..< 4 { try functionNeverHit.run("work()") } } },
        reference: { try seconds { for _ in 0 ..< 4 { try plain.run("work()") } } })
    let floor = Benchmark(
        name: "debugger: floor, an empty C call hook",
        target: nil,
        ours: { try bareSeconds(hooked: true) },
        reference: { try bareSeconds(hooked: false) })
    /// Runs work() 4 times in a bare state (no bridge), with or without an empty call hook.
    func bareSeconds(hooked: Bool) throws -> Double {
        let elapsed = bench_floor_run(hooked ? bareHooked : barePlain, "work", 4)
        guard elapsed >= 0 else { throw DebugServerError.cannotListen("work() failed in a bare state") }
        return elapsed
    }
    var perHit = Benchmark(
        name: "debugger: conditional breakpoint, \(hits) hits",
        target: nil,
        ours: { try seconds { try conditional.run("hot(\(hits))") } },
        reference: { try seconds { try plain.run("hot(\(hits))") } })
    perHit.report = {
        var ours: [Double] = []
        var reference: [Double] = []
        for _ in 0 ..< 3 {
            ours.append(try seconds { try conditional.run("hot(\(hits))") })
            reference.append(try seconds { try plain.run("hot(\(hits))") })
        }
        let cost = (median(ours) - median(reference)) / Double(hits)
        return ["per hit: \(format(cost * 1e6, 2)) us (the condition `i < 0` evaluated \(hits) times, never true)"]
    }
    return [attached, function, floor, perHit]
}
