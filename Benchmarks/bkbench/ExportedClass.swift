import BlocksBridgeExport

/// A macro-exported class against the same class written by hand with `LuaClass` (typed closures
/// and key paths): a method call and a property get and set from Lua. Both should take the same
/// path (one typed closure per member), so the target is 1.0x.
@LuaExport
final class ExportedTally: LuaExportable {
    var count = 0
    init() {}
    func add(_ n: Int) -> Int {
        count &+= n
        return count
    }
}

final class HandWrittenTally: LuaBridged, LuaConvertible {
    var count = 0
    static let luaClass = LuaClass(
        name: "HandWrittenTally",
        methods: [.method("add") { (tally: HandWrittenTally, n: Int) -> Int in
            tally.count &+= n
            return tally.count
        }],
        properties: [.readWrite("count", \HandWrittenTally.count)]
    )
}

func exportedClassBenchmarks(calls: Int) throws -> [Benchmark] {
    let state = try LuaState()
    try state.setGlobal("exported", ExportedTally())
    try state.setGlobal("handWritten", HandWrittenTally())
    try state.run("""
        function callLoop(o, n) local s = 0 for i = 1, n do s = o:add(1) end return s end
        function propertyLoop(o, n) for i = 1, n do o.count = o.count + 1 end return o.count end
        """)
    func time(_ loop: String, _ global: String) throws -> Double {
        let object = try state.global(global, as: LuaRef.self)
        return try seconds { _ = try state.call(loop, object, calls) }
    }
    return [
        Benchmark(name: "@LuaExport method call vs hand-written LuaClass (\(calls / 1_000_000)M)", target: 1.0,
                  ours: { try time("callLoop", "exported") }, reference: { try time("callLoop", "handWritten") }),
        Benchmark(name: "@LuaExport property get+set vs hand-written LuaClass (\(calls / 1_000_000)M)", target: 1.0,
                  ours: { try time("propertyLoop", "exported") }, reference: { try time("propertyLoop", "handWritten") }),
    ]
}
