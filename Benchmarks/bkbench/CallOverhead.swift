import BlocksBridge

/// The cost of crossing into Swift: an exported Swift function vs a C builtin of the same arity
/// (`rawlen`), each called 10 million times from a Lua loop.
func callOverheadBenchmark(calls: Int) throws -> Benchmark {
    let state = try LuaState()
    let stack = state.stack
    stack.pushGlobalTable()
    stack.push(function: "swiftLength") { stack throws(LuaRaise) in
        try stack.checkTable(1)
        stack.push(stack.rawLength(1))
        return 1
    }
    stack.rawSet(-2, field: "swiftLength")
    stack.pop()
    try state.run("""
        t = {1, 2, 3}
        function loop(f, n) local t = t for i = 1, n do f(t) end end
        """)
    func time(_ function: String) throws -> Double {
        try seconds { try state.run("loop(\(function), \(calls))") }
    }
    return Benchmark(name: "call: Swift function vs rawlen (\(calls / 1_000_000)M)", target: 1.5,
                     ours: { try time("swiftLength") }, reference: { try time("rawlen") })
}
