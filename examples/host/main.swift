// An example host: exposes a Swift object to a Lua script, observes a property the script sets
// (and the script observes one Swift sets), gives the object a delegate implemented in Lua (a
// dynamic delegate), lets the script schedule blocks and timers on the event loop, calls the
// script's functions with typed arguments and results, and checks what happened.
// Run: swift run HostExample
import BlocksBridgeExport
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The folder of this file, where the script lives.
let scriptDirectory = String(#filePath.prefix(upTo: #filePath.lastIndex(of: "/") ?? #filePath.endIndex))

/// Lines a Swift closure collects while Lua calls it (on the loop's thread, not necessarily ours).
final class Inbox: Sendable {
    private let lines = Mutex<[String]>([])
    func add(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}

var failures = 0
@MainActor func check(_ condition: Bool, _ what: String) {
    print((condition ? "ok   " : "FAIL ") + what)
    if !condition { failures += 1 }
}

@MainActor func runExample() async throws(LuaError) {
    let lua = try LuaState()
    let thermostat = Thermostat(room: "kitchen", temperature: 18, target: 18)
    var reports: [String] = []

    // Observe the target, whoever sets it.
    var targets: [Double] = []
    thermostat.luaObservers.observe("target") { change in
        if let new = change.new as? Double { targets.append(new) }
    }

    // Expose the class (constructor, for the script), the object and a Swift function.
    try lua.register(Thermostat.self)
    try lua.setGlobal("thermostat", thermostat)
    lua.register("report") { (line: String) in reports.append(line) }

    // Declare the delegate protocol and attach the object's dynamic delegate.
    try lua.call("bk.protocol", "ThermostatDelegate", Thermostat.delegateProtocol)
    thermostat.delegate = try lua.call("bk.dynamicDelegate", thermostat, as: LuaRef.self)

    // Run the script, then the event loop until its timer and delayed block are done.
    let version = try await lua.runFileUntilIdle(scriptDirectory + "/thermostat.lua", as: String.self)
    check(version == BKModule.version, "the script ran and returned bk.version() (\(version))")
    check(thermostat.target == 21.5 && targets == [21.5], "Swift observed the script set the target: \(targets)")
    check(thermostat.temperature == 21.5, "the script's timer stepped the thermostat to \(thermostat.temperature)")
    let readings = try lua.call("temperatureReadings", as: [Double].self)
    check(readings == [18.5, 19, 19.5, 20, 20.5, 21, 21.5], "Lua observed the temperature Swift set: \(readings)")
    check(thermostat.log == ["target set by the script", "a delayed block ran"],
          "the script called a Swift method, now and from a delayed block: \(thermostat.log)")
    check(reports == ["kitchen reached 21.5"], "the Lua delegate was told, through a Swift closure: \(reports)")

    // Call a Lua function with typed arguments and a typed result.
    thermostat.target = 19  // Swift-side writes are what the script reads next (and are observed)
    check(targets == [21.5, 19], "Swift observers see Swift-side sets too: \(targets)")
    let steps = try lua.call("settle", 1.0, 100, as: Int.self)
    check(steps == 3 && thermostat.temperature == 19, "settle took \(steps) steps to \(thermostat.temperature)")

    // The delegate decides: its Lua block answers false for the cellar (made by the script).
    let cellar = try lua.call("Thermostat", "cellar", 10.0, 12.0, as: Thermostat.self)
    check(cellar.room == "cellar", "the script constructed a Thermostat for the \(cellar.room)")
    cellar.delegate = try lua.call("bk.dynamicDelegate", cellar, as: LuaRef.self)
    try lua.setGlobal("thermostat", cellar)
    try lua.call("attachDelegate", cellar)
    check(try lua.call("settle", 1.0, 5, as: Int.self) == 5 && cellar.temperature == 10,
          "the cellar's Lua delegate said no: it stayed at \(cellar.temperature)")

    // Calling Lua later, from another thread: LuaRef and LuaClosure are Sendable, so a Swift timer,
    // a Dispatch queue or a task can keep a Lua callback and call it. callOnLoop runs the call on
    // the loop's thread (its error would go to bk.onError); here it hands Lua a Swift closure to
    // answer through.
    let onOutsideReading = try lua.global("onOutsideReading", as: LuaRef.self)
    let inbox = Inbox()
    let reply = LuaClosure(name: "reply") { (line: String) in inbox.add(line) }
    await Task.detached { onOutsideReading.callOnLoop(7.5, reply) }.value
    await lua.eventLoop.waitUntilIdle()
    check(inbox.all == ["cellar noted 7.5 outside"], "a detached task called Lua on the loop: \(inbox.all)")

    // Errors come back as Swift errors with the Lua message and traceback.
    do {
        _ = try lua.call("settle", "fast", 1, as: Int.self)
        check(false, "a bad argument is an error")
    } catch {
        check(error.message.hasSuffix("bad argument #1 to 'step' (number expected, got string)"),
              "a bad argument is a LuaError: \(error.message)")
    }
}

do {
    try await runExample()
} catch {
    print("host example: \(error)")
    failures += 1
}
print(failures == 0 ? "host example: ok" : "host example: \(failures) failed")
exit(failures == 0 ? 0 : 1)
