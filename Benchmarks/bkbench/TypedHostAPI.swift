import BlocksBridge

/// The typed host API against the stack-level code it saves writing:
/// - Lua calling a closure registered with typed arguments vs a hand-written stack function;
/// - Swift calling a Lua function with `call(_:_:as:)` vs pushing, calling and reading by hand.
func typedRegisteredFunctionBenchmark(calls: Int) throws -> Benchmark {
    let state = try LuaState()
    state.register("typedAdd") { (a: Int, b: Int) in a + b }
    state.register("stackAdd", raw: { stack throws(LuaRaise) in
        let a = try stack.checkInteger(1)
        let b = try stack.checkInteger(2)
        stack.push(a &+ b)
        return 1
    })
    try state.run("function loop(f, n) local s = 0 for i = 1, n do s = f(s, 1) end return s end")
    func time(_ function: String) throws -> Double {
        try seconds { _ = try state.call("loop", LuaClosureName(function), calls) }
    }
    return Benchmark(name: "register: typed closure vs stack function (\(calls / 1_000_000)M)", target: 1.5,
                     ours: { try time("typedAdd") }, reference: { try time("stackAdd") })
}

func typedCallBenchmark(calls: Int) throws -> Benchmark {
    let state = try LuaState()
    try state.run("function add(a, b) return a + b end")
    let ours = {
        try seconds {
            var sum = 0
            for i in 0 ..< calls { sum &+= try state.call("add", i, 1, as: Int.self) }
            precondition(sum > 0)
        }
    }
    let reference = {
        try seconds {
            let stack = state.stack
            var sum: Int64 = 0
            for i in 0 ..< calls {
                stack.pushGlobalTable()
                stack.rawGet(-1, field: "add")
                stack.remove(at: -2)
                stack.push(Int64(i))
                stack.push(Int64(1))
                try stack.call(arguments: 2, results: 1)
                sum &+= stack.toInteger(-1) ?? 0
                stack.pop()
            }
            precondition(sum > 0)
        }
    }
    return Benchmark(name: "call: typed call(_:as:) vs stack calls (\(calls / 1000)k)", target: 1.75,
                     ours: ours, reference: reference)
}

/// A global function passed by name to the Lua loop (pushed as the value of that global).
private struct LuaClosureName: LuaConvertible {
    let name: String
    init(_ name: String) { self.name = name }
    func push(on stack: LuaStack) {
        stack.pushGlobalTable()
        stack.rawGet(-1, field: name)
        stack.remove(at: -2)
    }
    static func read(from stack: LuaStack, at index: Int32) -> LuaClosureName? { nil }
    static var luaTypeName: String { "function" }
}
