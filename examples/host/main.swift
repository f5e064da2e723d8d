// An example host: exposes a Swift object to a Lua script, runs the script, calls its functions
// with typed arguments and results, and checks what the script did. Run: swift run HostExample
import BlocksBridge
#if canImport(Glibc)
import Glibc
#endif

/// The folder of this file, where the script lives.
let scriptDirectory = String(#filePath.prefix(upTo: #filePath.lastIndex(of: "/") ?? #filePath.endIndex))

var failures = 0
@MainActor func check(_ condition: Bool, _ what: String) {
    print((condition ? "ok   " : "FAIL ") + what)
    if !condition { failures += 1 }
}

@MainActor func runExample() throws(LuaError) {
    let lua = try LuaState()
    let thermostat = Thermostat(room: "kitchen", temperature: 18, target: 18)
    var reports: [String] = []

    // Expose the object and a Swift function to the script.
    lua.setGlobal("thermostat", thermostat)
    lua.register("report") { (line: String) in reports.append(line) }

    // Run the script: it sets a property and defines `settle`.
    let version = try lua.runFile(scriptDirectory + "/thermostat.lua", as: String.self)
    check(version == BKModule.version, "the script ran and returned bk.version() (\(version))")
    check(thermostat.target == 21.5, "the script set thermostat.target (\(thermostat.target))")
    check(thermostat.log == ["target set by the script"], "the script called a Swift method")

    // Call a Lua function with typed arguments and a typed result.
    let steps = try lua.call("settle", 0.5, 100, as: Int.self)
    check(steps == 7 && thermostat.temperature == 21.5, "settle took \(steps) steps to \(thermostat.temperature)")
    check(reports == ["kitchen reached 21.5 in 7 steps"], "the script reported through a Swift closure")

    // Errors come back as Swift errors with the Lua message and traceback.
    thermostat.target = 19  // Swift-side writes are what the script reads next
    do {
        _ = try lua.call("settle", "fast", 1, as: Int.self)
        check(false, "a bad argument is an error")
    } catch {
        check(error.message.hasSuffix("bad argument #1 to 'step' (number expected, got string)"),
              "a bad argument is a LuaError: \(error.message)")
    }
}

do {
    try runExample()
} catch {
    print("host example: \(error)")
    failures += 1
}
print(failures == 0 ? "host example: ok" : "host example: \(failures) failed")
exit(failures == 0 ? 0 : 1)
