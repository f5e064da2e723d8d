import BlocksBridge
import Testing

/// The Swift side of dynamic delegates: a Swift object forwarding a Swift protocol's calls to the
/// Lua dynamic delegate of an object (DelegateForwarder), as `bk.XMLParser` does.
@Suite struct DynamicDelegateTests {
    /// A Swift "delegating object": `drive(obj, names...)` calls each named method of obj's
    /// dynamic delegate for `SwiftDelegate` through a DelegateForwarder, collecting answers.
    final class Log: @unchecked Sendable {
        var answers: [String] = []
        var errorsSeen = 0
    }

    /// Registers `SwiftDelegate` and exports `drive`, which records into `log`.
    func exportDriver(_ state: LuaState, _ log: Log) {
        let stack = state.stack
        DelegateProtocol(name: "SwiftDelegate", methods: [
            "thing:didChange:": .init(),
            "thingShouldStart": .init(combine: .and),
        ]).register(in: stack)
        stack.pushGlobalTable()
        stack.push(function: "drive") { stack throws(LuaRaise) in
            try stack.checkTable(1)
            guard let proto = DelegateProtocol.named("SwiftDelegate", in: stack) else { throw .message("no protocol") }
            let names = (2 ... max(stack.top, 2)).compactMap { stack.stringValue($0) }
            let forwarder = try DelegateForwarder(stack: stack, object: 1, protocol: proto)
            forwarder.onError = { log.errorsSeen += 1 }
            for name in names {
                forwarder.call(name, arguments: { stack in
                    stack.push("arg")
                    return 1
                }, result: { stack in
                    log.answers.append(stack.toString(-1) ?? "nil")
                })
            }
            // Raised only now, after the "framework" (this loop) has returned.
            try forwarder.raisePendingError()
            stack.push(Int64(log.answers.count))
            return 1
        }
        stack.rawSet(-2, field: "drive")
        stack.pop()
    }

    @Test func forwardsToBlocksWithTheObjectFirst() throws {
        let log = Log()
        let state = try scriptingState { exportDriver($0, log) }
        let result = try state.run("""
            local obj = {}
            local dd = bk.dynamicDelegateForProtocol(obj, "SwiftDelegate")
            dd:implementMethod("thing:didChange:", function(o, a) return (o == obj and "obj " or "? ") .. a end)
            return drive(obj, "thingDidChange", "thing:didChange:")
            """)
        #expect(result.first?.integer == 2)
        #expect(log.answers == ["obj arg", "obj arg"])
    }

    @Test func realDelegateAndDefaultsWithoutBlocks() throws {
        let log = Log()
        let state = try scriptingState { exportDriver($0, log) }
        try state.run("""
            obj = {}
            real = { thingShouldStart = function(self, o, a) return "real " .. a end }
            bk.dynamicDelegateForProtocol(obj, "SwiftDelegate").realDelegate = real
            drive(obj, "thingShouldStart", "thingDidChange")
            """)
        #expect(log.answers == ["real arg", "nil"])
    }

    @Test func firstErrorStopsLaterCallsAndIsRaisedAfterwards() throws {
        let log = Log()
        let state = try scriptingState { exportDriver($0, log) }
        let result = try state.run("""
            local obj = {}
            local calls = 0
            bk.dynamicDelegateForProtocol(obj, "SwiftDelegate"):implementMethod("thingDidChange", function()
              calls = calls + 1
              if calls == 2 then error("second call fails") end
              return "ok"
            end)
            local ok, err = pcall(drive, obj, "thingDidChange", "thingDidChange", "thingDidChange")
            return ok, err, calls
            """)
        #expect(result.count == 3)
        #expect(result[0].boolean == false)
        // Unchanged, as the block raised it (no traceback appended).
        #expect(result[1].string == "[string \"local obj = {}...\"]:5: second call fails")
        #expect(result[2].integer == 2)
        #expect(log.answers == ["ok"])
        #expect(log.errorsSeen == 1)
        // The state is still fine.
        #expect(try state.run("return 1 + 1", as: Int.self) == 2)
    }

    @Test func methodsOutsideTheProtocolAreNotCalled() throws {
        let log = Log()
        let state = try scriptingState { exportDriver($0, log) }
        try state.run("drive({}, 'notAMethod')")
        #expect(log.answers.isEmpty)
    }

    @Test func xmlParserRunsFromAHost() throws {
        let state = try LuaState()
        let result = try state.run("""
            local bk = require "bk"
            local p = bk.XMLParser("<list><item n='1'/><item n='2'/></list>")
            local sum = 0
            p.delegate:implementMethod("parserDidStartElement", function(_, name, _, _, attributes)
              if name == "item" then sum = sum + tonumber(attributes.n) end
            end)
            return p:parse(), sum
            """)
        #expect(result.map(\.scalar) == [.boolean(true), .integer(3)])
    }

    /// A Swift delegating class made with the public API: `.dynamicDelegate` property,
    /// `registerDelegateProtocol`, and a method forwarding through a DelegateForwarder.
    final class Thermometer: LuaBridged {
        var readings = 0
        static let luaClass = LuaClass(
            name: "test.Thermometer",
            methods: [
                BKFunction("measure") { stack throws(LuaRaise) in
                    let thermometer = try stack.checkObject(Thermometer.self, at: 1)
                    guard let proto = DelegateProtocol.named("ThermometerDelegate", in: stack) else { return 0 }
                    let forwarder = try DelegateForwarder(stack: stack, object: 1, protocol: proto)
                    var accepted = true
                    forwarder.call("thermometer:shouldReport:", arguments: { stack in
                        stack.push(21.5)
                        return 1
                    }, result: { stack in accepted = stack.toBool(-1) })
                    if accepted { thermometer.readings += 1 }
                    try forwarder.raisePendingError()
                    stack.push(accepted)
                    return 1
                },
            ],
            properties: [.dynamicDelegate(protocol: "ThermometerDelegate")])
    }

    @Test func swiftClassWithADynamicDelegateProperty() throws {
        let state = try LuaState()
        let stack = state.stack
        DelegateProtocol(name: "ThermometerDelegate", methods: [
            "thermometer:shouldReport:": .init(combine: .and, defaultValue: nil),
        ]).register(in: stack)
        LuaClass.registerDelegateProtocol("ThermometerDelegate", for: Thermometer.luaClass, in: stack)
        let thermometer = Thermometer()
        stack.pushGlobalTable()
        stack.push(object: thermometer)
        stack.rawSet(-2, field: "thermometer")
        stack.pop()
        let result = try state.run("""
            local bk = require "bk"
            local t = thermometer
            local answers = { t:measure() }            -- no block, no real delegate: default nil
            t.delegate:implementMethod("thermometerShouldReport", function(th, c) return c > 20 end)
            answers[#answers + 1] = t:measure()
            local real = { thermometerShouldReport = function(self, th, c) return false end }
            t.delegate = real                         -- combine "and": real says no
            answers[#answers + 1] = t:measure()
            return answers[1], answers[2], answers[3], bk.dynamicDelegate(t) == t.delegate
            """)
        #expect(result.map(\.scalar) == [.boolean(false), .boolean(true), .boolean(false), .boolean(true)])
        #expect(thermometer.readings == 1)
    }
}
