import BlocksBridge

/// The debugger's cost, in one process: a CPU-bound script (a numeric loop and a recursive function:
/// about 30,000 calls a round) with a debug server attached and a breakpoint in a function that is
/// never called, against the same script in a state without one (target 1.3x: the call events are
/// the cost); and a conditional breakpoint whose condition never holds, hit 1e5 times (the per-hit
/// cost is reported: the agent runs the condition in a coroutine of its own each time).
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
        """
    let path = "/bkbench/debugger-benchmark.lua"
    let plain = try LuaState()
    try plain.run(script, name: "@" + path)
    let debugged = try LuaState()
    try debugged.run(script, name: "@" + path)
    try debugged.startDebugServer(port: 0)
    guard let session = debugged.debugSession else { throw DebugServerError.cannotListen("no session") }
    func setBreakpoints(_ specs: [JSONValue]) {
        session.handle(.object([
            ("seq", .number(1)), ("type", .string("request")), ("command", .string("setBreakpoints")),
            ("arguments", .object([("source", .object([("path", .string(path))])), ("breakpoints", .array(specs))])),
        ]))
    }
    setBreakpoints([.object([("line", .number(2))])])
    try debugged.run("work()")  // takes the breakpoints (a poke)
    let attached = Benchmark(
        name: "debugger: breakpoint never hit (CPU-bound)",
        target: 1.3,
        ours: { try seconds { try debugged.run("work()") } },
        reference: { try seconds { try plain.run("work()") } })
    let conditional = Benchmark(
        name: "debugger: conditional breakpoint, \(hits) hits",
        target: nil,
        ours: {
            setBreakpoints([.object([("line", .number(13)), ("condition", .string("i < 0"))])])
            defer { setBreakpoints([.object([("line", .number(2))])]) }
            return try seconds { try debugged.run("hot(\(hits))") }
        },
        reference: { try seconds { try plain.run("hot(\(hits))") } },
        report: nil)
    var perHit = conditional
    perHit.report = {
        let took = try seconds {
            setBreakpoints([.object([("line", .number(13)), ("condition", .string("i < 0"))])])
            try debugged.run("hot(\(hits))")
            setBreakpoints([.object([("line", .number(2))])])
        }
        return ["per hit: \(format(took / Double(hits) * 1e6, 2)) us (a round of \(hits) hits: \(format(took)) s)"]
    }
    return [attached, perHit]
}
